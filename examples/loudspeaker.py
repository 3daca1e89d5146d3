"""A moving-coil loudspeaker: amplifier, voice coil (Re, Le, Bl), cone mass, suspension and losses.

Run ``python examples/loudspeaker.py [out_dir]``: prints the Thiele–Small
resonance, the poles and a comparison with the suspension alone, and saves
the Bode plot of cone displacement per volt.
"""
import sys
from pathlib import Path

import numpy as np

import netdyn
from netdyn.components.electrical import Inductor, Resistor, VoltageSource
from netdyn.components.transducers import MovingCoil
from netdyn.components.translational import Damper, Mass, Spring

# a 6.5" woofer, roughly
PARAMS = dict(Re=6.0, Le=0.5e-3, Bl=7.0, Mms=0.015, Kms=1500.0, Rms=1.2)


def build(Re=6.0, Le=0.5e-3, Bl=7.0, Mms=0.015, Kms=1500.0, Rms=1.2, V=1.0):
    """The loudspeaker as a network: ``V1`` drives the coil; the cone is node ``cone``."""
    net = netdyn.Network("loudspeaker")
    net.add(VoltageSource("V1", "amp", "0", V), Resistor("Re", "amp", "n1", Re), Inductor("Le", "n1", "n2", Le),
            MovingCoil("coil", "n2", "0", "cone", Bl=Bl), Mass("Mms", "cone", m=Mms),
            Spring("Kms", "cone", "0", k=Kms), Damper("Rms", "cone", "0", c=Rms))
    return net


def main(out=Path("examples/output")):
    out.mkdir(exist_ok=True)
    net = build(**PARAMS)
    lin = netdyn.linearize(net, inputs=["V1"], outputs=["x_cone", "i(Le)"], u={"V1": 0})
    fs = np.sqrt(PARAMS["Kms"] / PARAMS["Mms"]) / (2 * np.pi)
    print(f"suspension resonance fs = {fs:.1f} Hz; poles {np.round(lin.poles(), 1)}")
    print(f"natural frequencies {lin.natural_frequencies() / (2 * np.pi)} Hz, damping {lin.damping_ratios()}")
    lin.plot_bode(out / "loudspeaker_bode.png", w=np.logspace(1, 4.5, 400) * 2 * np.pi, output="x_cone")
    sol = netdyn.simulate(net, (0, 0.05), t_eval=np.linspace(0, 0.05, 5001))
    print(sol.energy_report())
    return lin


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("examples/output"))
