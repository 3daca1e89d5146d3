"""Magnetic levitation of a steel ball under an electromagnet: an unstable equilibrium.

The coil's inductance grows as the ball nears the magnet, ``L(x) = L1 + L0 a / (a − x)``
(``x < 0`` is the ball's height below the magnet face, the gap is ``−x``); its
coenergy ``L(x) i²/2`` pulls the ball up with ``i² L'(x)/2`` against gravity.
Run ``python examples/magnetic_levitation.py [out_dir]``.
"""
import sys
from pathlib import Path

import numpy as np

import netdyn
from netdyn.components.electrical import Resistor, VoltageSource
from netdyn.components.transducers import Solenoid
from netdyn.components.translational import Force, Mass

PARAMS = dict(m=0.05, g=9.81, R=10.0, L1=0.02, L0=0.01, a=0.005, V=12.0)


def inductance(L1, L0, a):
    return lambda x: L1 + L0 * a / (a - x)


def build(m=0.05, g=9.81, R=10.0, L1=0.02, L0=0.01, a=0.005, V=12.0):
    """The levitator as a network: source ``V1``, coil resistance ``R``, ball node ``ball`` (height)."""
    net = netdyn.Network("maglev")
    net.add(VoltageSource("V1", "s", "0", V), Resistor("R", "s", "c", R),
            Solenoid("magnet", "c", "0", "ball", L=inductance(L1, L0, a)), Mass("m", "ball", m=m),
            Force("gravity", "ball", -m * g))
    return net


def equilibrium_gap(m=0.05, g=9.81, R=10.0, L1=0.02, L0=0.01, a=0.005, V=12.0):
    """Closed form: i = V/R and (i²/2) L0 a/(a + s)² = m g for the gap s."""
    i = V / R
    return a * (np.sqrt(L0 * i**2 / (2 * a * m * g)) - 1), i


def main(out=Path("examples/output")):
    out.mkdir(exist_ok=True)
    net = build(**PARAMS)
    s, i = equilibrium_gap(**PARAMS)
    op = netdyn.equilibrium(net, inputs=["V1"], guess={"x_ball": -0.8 * s}, steady=["q_magnet_0"])
    print(f"equilibrium gap {-op.as_dict()['x_ball'] * 1e3:.3f} mm (closed form {s * 1e3:.3f} mm), "
          f"current {op.as_dict()['q_magnet_0_dot']:.3f} A")
    lin = netdyn.linearize(op, inputs=["V1"], outputs=["x_ball"])
    print(f"poles {lin.poles()} (one in the right half plane: the levitation is unstable without feedback)")
    lin.plot_bode(out / "maglev_bode.png")
    return op, lin


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
