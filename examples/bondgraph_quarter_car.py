"""A quarter-car suspension over a bump, as a bond graph; against its network (force-current analogy).

    python examples/bondgraph_quarter_car.py [output-folder]
"""
import sys
from pathlib import Path

import numpy as np
import sympy as sp

import netdyn
from netdyn import t

PARAMS = dict(kt=2e5, mu=40.0, ks=2e4, cs=1.5e3, ms=300.0)
BUMP = sp.Piecewise((0.05 * sp.pi * sp.sin(2 * sp.pi * t), t < 1), (0, True))   # road velocity over a 1 s bump


def build(kt, mu, ks, cs, ms, road=BUMP):
    """Sf(road) -> 0(tyre force: k_t) -> 1(wheel: m_u) -> 0(suspension force) -> 1(body: m_s);
    the suspension spring and damper share the relative velocity (a 1-junction)."""
    car = netdyn.BondGraph("quarter car")
    for kind, name, p in [("Sf", "road", {"flow": road}), ("0", "tyre_force", {}), ("C", "k_t", {"C": 1 / kt}),
                          ("1", "v_wheel", {}), ("I", "m_u", {"I": mu}), ("0", "susp_force", {}),
                          ("1", "v_rel", {}), ("C", "k_s", {"C": 1 / ks}), ("R", "c_s", {"R": cs}),
                          ("1", "v_body", {}), ("I", "m_s", {"I": ms})]:
        car.add(kind, name, **p)
    car.chain("road", "tyre_force", "v_wheel", "susp_force", "v_body", "m_s")
    car.bond("tyre_force", "k_t"); car.bond("v_wheel", "m_u")
    car.chain("susp_force", "v_rel", "k_s"); car.bond("v_rel", "c_s")
    return car


def as_network(kt, mu, ks, cs, ms, road=BUMP):
    """The same car as a translational network (node positions)."""
    from netdyn.components.translational import Damper, Mass, Spring, VelocitySource
    net = netdyn.Network("quarter car network")
    net.add(VelocitySource("road", "r", road), Spring("k_t", "r", "w", k=kt), Mass("m_u", "w", m=mu),
            Spring("k_s", "w", "b", k=ks), Damper("c_s", "w", "b", c=cs), Mass("m_s", "b", m=ms))
    return net


def main(out=Path("examples/output"), T=3.0):
    out.mkdir(parents=True, exist_ok=True)
    car = build(**PARAMS)
    print(car.causality().report())
    te = np.linspace(0, T, 301)
    sol = netdyn.simulate(car, (0, T), t_eval=te, rtol=1e-10)
    ref = netdyn.simulate(as_network(**PARAMS), (0, T), t_eval=te, rtol=1e-10)
    body = sol["q_m_s"]
    err = np.max(np.abs(body - ref["x_b"])) / np.max(np.abs(ref["x_b"]))
    print(f"peak body travel {100 * body.max():.2f} cm; bond graph vs network {err:.1e}; "
          f"energy balance {sol.power_balance()['relative']:.1e}")
    car.draw(out / "bondgraph_quarter_car.png")
    return err


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
