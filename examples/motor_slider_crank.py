"""A DC motor driving the slider-crank of the book's Example 4.2.

The mechanism is the planar linkage ``netdyn.linkages.slider_crank`` (rigid
bodies and joints on the graph); the :class:`~netdyn.components.transducers.DCMotor`
is an element of the same network, its shaft node naming the crank body, fed
by a voltage source. :func:`build_hand_typed` gives the same system from the
book's hand-typed model (:func:`netdyn.models.slider_crank` plus the motor's
own contribution through :func:`netdyn.models.with_motor`) for cross-checks.
Run ``python examples/motor_slider_crank.py [out_dir]``.
"""
import sys
from pathlib import Path

import netdyn
from netdyn import linkages
from netdyn.components.electrical import VoltageSource
from netdyn.components.transducers import DCMotor
from netdyn.models import slider_crank, with_motor

MOTOR = dict(R=1.0, L=0.01, K=0.05, J=2e-4, B=1e-4)
GUESS = {"theta_rod": -0.1, "x_block": 1.5}  # the assembly branch with the block to the right
HAND_GUESS = {"theta2": -0.1, "x3": 1.5, "x1": 0.2, "y1": 0.1, "x2": 1.0, "y2": 0.1}


def build(voltage=6.0, **motor):
    """The network: slider-crank bodies and joints, motor ``M`` on the crank, source ``V1``."""
    net = linkages.slider_crank(tau=0)
    net.remove("tau")
    net.add(VoltageSource("V1", "p", "0", voltage), DCMotor("M", "p", "0", "crank", **{**MOTOR, **motor}))
    return net


def build_hand_typed(voltage=6.0, **motor):
    """The same system from the book's hand-typed model (``voltage`` may be an input function of t)."""
    p = linkages.BOOK
    mech = slider_crank(m1=p["m1"], m2=p["m2"], m3=p["m3"], l1=p["l1"], l2=p["l2"], I1=p["I1"], I2=p["I2"])
    return with_motor(mech, "theta1", DCMotor("M", "a", "0", "s", **{**MOTOR, **motor}), voltage)


def main(out=Path("examples/output")):
    out.mkdir(exist_ok=True)
    net = build()
    sol = netdyn.simulate(net, (0, 1.0), q0={"theta_crank": 0.3}, guess=GUESS)
    pb = sol.power_balance()
    print(f"crank speed after 1 s: {sol['theta_crank_dot'][-1]:.2f} rad/s; "
          f"power balance residual {pb['relative']:.2g} relative")
    print(sol.energy_report())
    sol.plot("theta_crank_dot", "i(M)", path=out / "motor_slider_crank.png")
    lin = netdyn.linearize(net, {"theta_crank": 0.7}, inputs=["V1"], outputs=["theta_crank", "x_block"],
                           u={"V1": 0}, guess=GUESS)
    print(f"linearized at rest, theta_crank = 0.7 rad: poles {lin.poles()}")
    return sol, lin


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
