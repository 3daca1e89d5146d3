"""Networks that know how they assemble (issue 26): ``net.assembly`` / ``net.set_assembly``, every ready-made
linkage carrying one, and ``simulate`` and the analyses filling what the caller left out from it."""
import numpy as np
import pytest

import netdyn
from netdyn import linkages, t
from netdyn.graph.assembly import Assembly, StoredGuess, fill
from netdyn.linkages import parallel


# ------------------------------------------------------------------------------------------ the API

def test_set_assembly_checks_names_and_values_and_keeps_parts_not_given():
    net = linkages.four_bar()
    guess = dict(net.assembly.guess)
    a = net.set_assembly(q0={"O": 0.4}, f0={"theta_crank_dot": 1.0})
    assert a is net.assembly and dict(a.guess) == guess and dict(a.q0) == {"O": 0.4}
    net.set_assembly(f0={})                                  # {} clears a part, None keeps it
    assert dict(net.assembly.f0) == {} and dict(net.assembly.q0) == {"O": 0.4}
    with pytest.raises(netdyn.ModelError, match="'theta_crnak' is not a coordinate or joint coordinate"):
        net.set_assembly(q0={"theta_crnak": 0.4})
    for bad in (float("nan"), float("inf"), "abc", None, {"a": 1}, [1.0] * 7):
        with pytest.raises(netdyn.NetdynError):
            net.set_assembly(guess={"theta_rod": bad})
    assert dict(net.assembly.q0) == {"O": 0.4}               # a refused call changes nothing
    with pytest.raises(TypeError, match="read-only"):
        net.assembly.q0["O"] = 1.0
    net.assembly = None                                      # assigning clears (and checks) the whole assembly
    assert not net.assembly
    with pytest.raises(netdyn.ModelError, match="'x_ghost'"):
        net.assembly = Assembly(guess={"x_ghost": 1.0})


def test_names_of_every_kind_are_accepted():
    net = linkages.motor_four_bar()
    net.set_assembly(q0={"O": 0.4, "theta_A": 0.1, "x_rod": 1.0, "q_La": 0.0},
                     f0={"O_dot": 1.0, "q_La_dot": 0.5, "phi_p": 0.0})
    spatial = linkages.rssr()
    spatial.set_assembly(guess={"thetaz_R1": 0.0, "e0_S1": 1.0, "alpha_U2": 0.0, "z_rod": 0.1})
    with pytest.raises(netdyn.ModelError):
        spatial.set_assembly(guess={"theta_rod": 0.1})       # a spatial body has no planar angle


def test_fill_takes_each_part_from_the_caller_else_from_the_network():
    net = linkages.four_bar()
    net.set_assembly(q0={"O": 0.4})
    q0, f0, guess = fill(net)
    assert q0 == {"O": 0.4} and f0 is None and isinstance(guess, StoredGuess)
    q0, f0, guess = fill(net.model(), q0={"theta_crank": 0.1}, guess={"theta_rod": 0.9})
    assert q0 == {"theta_crank": 0.1} and guess == {"theta_rod": 0.9} and not isinstance(guess, StoredGuess)
    x, = netdyn.coordinates("x,")
    assert fill(netdyn.LagrangianModel([x], T=x.diff(t) ** 2 / 2), None, None, None) == (None, None, None)


# ------------------------------------------------------------------------------------------ the linkages

def _linkages():
    return {
        "four_bar": linkages.four_bar(), "four_bar gravity": linkages.four_bar(tau=False, gravity=True),
        "four_bar other lengths": linkages.four_bar(dict(linkages.BOOK, l2=1.0, l3=1.1)),
        "slider_crank": linkages.slider_crank(), "five_bar": linkages.five_bar()[0],
        "three_rrr": linkages.three_rrr()[0], "andrews": linkages.andrews_squeezer(),
        "motor_four_bar": linkages.motor_four_bar(), "3-RRR (parallel)": parallel.three_rrr().network(),
        "3-RPR (parallel)": parallel.three_rpr().network(), "five-bar (parallel)": parallel.five_bar().network(),
        "spherical_pendulum": linkages.spherical_pendulum(), "heavy_top": linkages.heavy_top(),
        "rssr": linkages.rssr(),
    }


#: linkages whose stored guess is not an exact assembly (the five-bar's is the rough guess it always
#: returned; Andrews' is in joint angles)
ROUGH = ("five_bar", "andrews")


def test_every_linkage_simulates_as_written_from_its_exact_assembly():
    """No argument but the span: each starts on its stored assembly (exact: the solve does not move it), and
    the planar ones in the relative formulation too."""
    for name, net in _linkages().items():
        assert net.assembly.guess, name
        spatial = any(getattr(b, "domain", None) == "spatial" for b in net.bodies.values())
        for formulation in ("absolute",) if spatial else ("absolute", "relative"):
            sol = netdyn.simulate(net, (0, 0.01), t_eval=[0, 0.01], formulation=formulation)
            assert sol.constraint_residual()["position"] < 1e-8, (name, formulation)
            if name not in ROUGH and formulation == "absolute":
                start = dict(zip(sol.model.coordinate_names, sol.q[:, 0]))
                for k, v in net.assembly.guess.items():
                    if k in start:  # (rssr's guess also names its relative coordinates)
                        assert start[k] == pytest.approx(v, abs=1e-9), (name, k)


def test_the_readme_four_bar_and_the_old_constant():
    sol = netdyn.simulate(linkages.four_bar(), (0, 1))        # issue 26: failed with a LoopClosureError
    assert sol["theta_rocker"][0] > 0 and sol.constraint_residual()["position"] < 1e-8
    # FOUR_BAR_GUESS still picks the elbow-up branch and, given, replaces the stored guess whole: the same start
    # as a network with no assembly
    bare = linkages.four_bar()
    bare.assembly = None
    a = netdyn.simulate(linkages.four_bar(), (0, 0.1), guess=linkages.FOUR_BAR_GUESS, t_eval=[0, 0.1])
    b = netdyn.simulate(bare, (0, 0.1), guess=linkages.FOUR_BAR_GUESS, t_eval=[0, 0.1])
    np.testing.assert_array_equal(a.q, b.q)
    with pytest.raises(netdyn.LoopClosureError):
        netdyn.simulate(bare, (0, 0.1))
    q = netdyn.assemble_configuration(linkages.four_bar().model(), guess=linkages.FOUR_BAR_GUESS,
                                      q0={"theta_crank": 0.4})
    assert q["theta_rocker"] == pytest.approx(0.9285, abs=1e-4)


def test_stored_q0_and_f0_are_used_and_the_callers_replace_them():
    net = linkages.four_bar()
    net.set_assembly(q0={"O": 0.4}, f0={"O_dot": 2.0})
    sol = netdyn.simulate(net, (0, 0.01), t_eval=[0, 0.01])
    assert sol["theta_crank"][0] == pytest.approx(0.4) and sol["theta_crank_dot"][0] == pytest.approx(2.0)
    sol = netdyn.simulate(net, (0, 0.01), t_eval=[0, 0.01], q0={"theta_crank": 0.2})  # stored f0 stays
    assert sol["theta_crank"][0] == pytest.approx(0.2) and sol["O_dot"][0] == pytest.approx(2.0)
    rel = netdyn.simulate(net.model(formulation="relative"), (0, 0.01), t_eval=[0, 0.01])
    assert rel["theta_O"][0] == pytest.approx(0.4) and rel["theta_O_dot"][0] == pytest.approx(2.0)


def test_andrews_starts_from_the_test_set_with_no_argument():
    sol = netdyn.simulate(linkages.andrews_squeezer(), (0, 1e-3), t_eval=[0, 1e-3])
    for joint, value in linkages.ANDREWS_Q0.items():
        assert sol[joint][0] == pytest.approx(value, abs=1e-9), joint
    assert not linkages.andrews_squeezer(dict(linkages.ANDREWS, c0=4000.0)).assembly  # other data: no claim


def test_a_spatial_guess_serves_both_formulations_and_the_callers_stays_strict():
    net = linkages.rssr()
    sol = netdyn.simulate(net, (0, 0.01), t_eval=[0, 0.01], formulation="relative")
    for name, value in linkages.rssr_guess(formulation="relative").items():   # exact there too
        assert sol[name][0] == pytest.approx(value, abs=1e-9), name
    with pytest.raises(netdyn.ModelError, match="unknown coordinate 'e0_crank' in the initial q"):
        netdyn.simulate(sol.model, (0, 0.01), guess=linkages.rssr_guess(formulation=None))


def test_recursive_path_starts_from_the_stored_assembly():
    sol = netdyn.simulate(parallel.three_rrr().network(), (0, 0.01), t_eval=[0, 0.01], method="recursive")
    guess = parallel.three_rrr().network().assembly.guess
    assert sol["x_platform"][0] == pytest.approx(guess["x_platform"], abs=1e-9)


def test_analyses_take_the_stored_guess():
    net = linkages.four_bar()
    mob = netdyn.mobility(net.model())
    assert mob.dof == 1 and mob.q[2] == pytest.approx(0.0, abs=1e-12)   # theta_crank of the stored assembly
    assert netdyn.assemble_configuration(net)["theta_rocker"] == pytest.approx(net.assembly.guess["theta_rocker"])
    k = netdyn.kinematics(net.model(), {"O": 0.5 * t}, np.array([0.0, 0.2]))
    assert np.all(k["theta_rocker"] > 0)                                  # elbow up throughout
    inv = netdyn.inverse_dynamics(net, {"O": 0.5 * t}, np.array([0.0, 0.2]))
    assert np.all(np.isfinite(inv.efforts["O"]))
    # a pendulum stored upright: equilibrium and linearize start there (joint names of a stored guess are
    # skipped by equilibrium, whose guess is coordinates only)
    from netdyn.components.planar import Gravity, Revolute, RigidBody
    pend = netdyn.Network("pendulum")
    pend.add(RigidBody("bar", 1.0, 1 / 12), Revolute("O", "ground", (0, 0), "bar", (-0.5, 0)), Gravity())
    pend.set_assembly(guess={"x_bar": 0.05, "y_bar": 0.45, "theta_bar": 1.5, "O": 1.5})
    op = netdyn.equilibrium(pend)
    assert op.as_dict()["theta_bar"] == pytest.approx(np.pi / 2, abs=1e-9)
    lin = netdyn.linearize(pend, {"y_bar": 0.5}, outputs=["theta_bar"])
    assert np.max(lin.poles().real) > 1.0                                # upright: unstable


def test_a_pendulum_stores_nothing_and_assembles_anyway():
    net = linkages.pendulum([1.0, 1.0], [1.0, 0.5])
    assert not net.assembly
    assert netdyn.simulate(net, (0, 0.01), t_eval=[0, 0.01]).constraint_residual()["position"] < 1e-10


def test_a_model_of_a_network_reads_its_assembly_later():
    net = linkages.slider_crank()
    model = net.model()
    net.set_assembly(q0={"O": 0.3})
    sol = netdyn.simulate(model, (0, 0.01), t_eval=[0, 0.01])
    assert sol["theta_crank"][0] == pytest.approx(0.3) and sol["x_block"][0] > 1.0
