"""A capacitor (condenser) microphone: a biased diaphragm whose capacitance changes with its deflection.

Bias ``V0`` through ``R`` onto the transducer ``C(x) = ε A / (d − x)``; the
diaphragm (mass ``m``, tension ``k``, damping ``c``) is pushed by the sound
force ``F(t)``. The electrostatic pull deflects it at rest (found with
:func:`netdyn.equilibrium`); the signal is the voltage across ``R``.
Run ``python examples/capacitor_microphone.py [out_dir]``.
"""
import sys
from pathlib import Path

import numpy as np

import netdyn
from netdyn.components.electrical import Resistor, VoltageSource
from netdyn.components.transducers import ElectrostaticTransducer
from netdyn.components.translational import Damper, Force, Mass, Spring

EPS0 = 8.854e-12
PARAMS = dict(V0=48.0, R=1e9, area=1e-4, gap=25e-6, m=2e-6, k=2000.0, c=0.02)


def build(V0=48.0, R=1e9, area=1e-4, gap=25e-6, m=2e-6, k=2000.0, c=0.02):
    """The microphone as a network: input ``F`` (sound force on the diaphragm node ``d``), bias ``V0``."""
    eA = EPS0 * area
    net = netdyn.Network("capacitor microphone")
    net.add(VoltageSource("V0", "b", "0", V0), Resistor("R", "b", "p", R),
            ElectrostaticTransducer("mic", "p", "0", "d", C=lambda x: eA / (gap - x)),
            Mass("m", "d", m=m), Spring("k", "d", "0", k=k), Damper("c", "d", "0", c=c), Force("F", "d", 0.0))
    return net


def main(out=Path("examples/output")):
    out.mkdir(exist_ok=True)
    net = build(**PARAMS)
    op = netdyn.equilibrium(net, inputs=["F"], guess={"x_d": 1e-7, "q_mic_0": 1e-10})
    print(f"rest deflection {op.as_dict()['x_d'] * 1e9:.2f} nm, charge {op.as_dict()['q_mic_0'] * 1e12:.3f} pC")
    lin = netdyn.linearize(op, inputs=["F"], outputs=["v(R)", "x_d"])
    print(f"poles {lin.poles()}")
    w = np.logspace(1, 5.5, 400) * 2 * np.pi
    lin.plot_bode(out / "microphone_bode.png", w=w, output="v(R)", input="F")
    mid = np.abs(lin.frequency_response([2 * np.pi * 1000], "v(R)", "F"))[0]
    print(f"sensitivity at 1 kHz: {mid * 1e3:.3f} mV per mN")
    return op, lin


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
