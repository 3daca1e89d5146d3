"""A pumped tank drained through a long pipe and a turbulent valve: a bond graph in pressure and volume flow.

    python examples/bondgraph_hydraulic.py [output-folder]

Tank: C = A/(ρg); pipe: inertance I = ρL/a; valve: Δp = k Q sqrt(Q² + ε²) (content k (Q² + ε²)^(3/2) / 3,
a nonlinear R). With a constant pump flow Q0 the level settles where k Q0² ≈ ρ g h: checked here, and the
energy balance closes.
"""
import sys
from pathlib import Path

import numpy as np
import sympy as sp

import netdyn
from netdyn import t

PARAMS = dict(rho=1000.0, g=9.81, A=0.5, L=20.0, a=3e-3, k=4e8, eps=1e-5)


def build(rho, g, A, L, a, k, eps, pump=2e-3 * (1 + sp.sin(t) / 2)):
    tank = netdyn.BondGraph("tank and pipe", effort="pressure", flow="volume flow")
    for kind, name, p in [("Sf", "pump", {"flow": pump}), ("0", "p_tank", {}), ("C", "tank", {"C": A / (rho * g)}),
                          ("1", "Q_pipe", {}), ("I", "pipe", {"I": rho * L / a}),
                          ("R", "valve", {"content": lambda Q: k * (Q**2 + eps**2)**sp.Rational(3, 2) / 3})]:
        tank.add(kind, name, **p)
    tank.chain("pump", "p_tank", "Q_pipe", "valve")
    tank.bond("p_tank", "tank"); tank.bond("Q_pipe", "pipe")
    return tank


def main(out=Path("examples/output"), pulsing=True):
    out.mkdir(parents=True, exist_ok=True)
    p = PARAMS
    steady = build(**p, pump=2e-3)
    print(steady.state_equations().equations())
    sol = netdyn.simulate(steady, (0, 2000), t_eval=np.linspace(0, 2000, 201), rtol=1e-9)
    h = sol["q_tank"][-1] / p["A"]
    h_ref = p["k"] * 2e-3 * np.sqrt(2e-3**2 + p["eps"]**2) / (p["rho"] * p["g"])
    print(f"settled level {h:.5f} m, closed form {h_ref:.5f} m; energy balance {sol.power_balance()['relative']:.1e}")
    if pulsing:
        pulsed = build(**p)
        sol2 = netdyn.simulate(pulsed, (0, 60), t_eval=np.linspace(0, 60, 121))
        print(f"with a pulsing pump the level after a minute is {sol2['q_tank'][-1] / p['A']:.3f} m")
    steady.draw(out / "bondgraph_hydraulic.png")
    return h, h_ref


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
