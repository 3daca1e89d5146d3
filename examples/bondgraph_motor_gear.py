"""A DC motor driving a load through a gear, as a bond graph: a dependent inertia simulated as a DAE.

    python examples/bondgraph_motor_gear.py [output-folder]

SCAP finds the load inertia in derivative causality (the gear ties it to the rotor); the bond graph still
becomes a LagrangianModel and simulates. Checked against the closed form of the same motor with the load
reflected to the rotor (J_m + n² J_L, B_m + n² B_L), which is a first-order-plus-inductance linear system.
"""
import sys
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

import netdyn

PARAMS = dict(U=12.0, RA=4.0, LA=15e-6, K=9.54e-3, Jm=1e-6, Bm=1e-6, n=0.25, JL=8e-6, BL=4e-6)


def build(U, RA, LA, K, Jm, Bm, n, JL, BL):
    """Se -> 1(armature: RA, LA) -> GY(K) -> 1(rotor: Jm, Bm) -> TF(n) -> 1(load: JL, BL)."""
    bg = netdyn.BondGraph("DC motor and gear")
    for kind, name, p in [("Se", "U", {"effort": U}), ("1", "armature", {}), ("R", "RA", {"R": RA}),
                          ("I", "LA", {"I": LA}), ("GY", "K", {"ratio": K}), ("1", "rotor", {}),
                          ("I", "Jm", {"I": Jm}), ("R", "Bm", {"R": Bm}), ("TF", "gear", {"ratio": n}),
                          ("1", "load", {}), ("I", "JL", {"I": JL}), ("R", "BL", {"R": BL})]:
        bg.add(kind, name, **p)
    bg.chain("U", "armature", "K", "rotor", "gear", "load", "JL")
    bg.bond("armature", "RA"); bg.bond("armature", "LA"); bg.bond("rotor", "Jm")
    bg.bond("rotor", "Bm"); bg.bond("load", "BL")
    return bg


def reflected(t, U, RA, LA, K, Jm, Bm, n, JL, BL):
    """Current and rotor speed of the motor with the load reflected to the rotor (solve_ivp, tight)."""
    J, B = Jm + n**2 * JL, Bm + n**2 * BL
    rhs = lambda _, y: [(U - RA * y[0] - K * y[1]) / LA, (K * y[0] - B * y[1]) / J]
    return solve_ivp(rhs, (t[0], t[-1]), [0.0, 0.0], t_eval=t, method="Radau", rtol=1e-12, atol=1e-12).y


def main(out=Path("examples/output"), T=0.3):
    out.mkdir(parents=True, exist_ok=True)
    bg = build(**PARAMS)
    print(bg.causality().report())
    t = np.linspace(0, T, 301)
    sol = netdyn.simulate(bg, (0, T), t_eval=t, rtol=1e-10)
    i_ref, w_ref = reflected(t, **PARAMS)
    err = max(np.max(np.abs(sol["q_LA_dot"] - i_ref)) / np.max(np.abs(i_ref)),
              np.max(np.abs(sol["q_Jm_dot"] - w_ref)) / np.max(np.abs(w_ref)))
    print(f"rotor speed {sol['q_Jm_dot'][-1]:.3f} rad/s, load speed {sol['q_JL_dot'][-1]:.3f} rad/s; "
          f"against the reflected-inertia closed form: {err:.1e}; energy balance {sol.power_balance()['relative']:.1e}")
    bg.draw(out / "bondgraph_motor_gear.png")
    return sol, err


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
