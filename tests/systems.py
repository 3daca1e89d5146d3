"""Small example systems shared by the tests, and the loader of the examples/ scripts."""
import importlib.util
from pathlib import Path

import sympy as sp

from netdyn import Network
from netdyn.components import electrical as el
from netdyn.components import rotational as rot
from netdyn.components import translational as tr
from netdyn.symbols import t

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    """The script ``examples/<name>.py`` as a module (its ``main`` not run)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def series_rlc(R=2.0, L=0.5, C=0.02, V=1.0):
    """Source ``V1`` (value ``V``) in series with ``R1``, ``L1`` and ``C1`` (nodes in, a, b)."""
    net = Network("series RLC")
    net.add(el.VoltageSource("V1", "in", "0", V), el.Resistor("R1", "in", "a", R), el.Inductor("L1", "a", "b", L),
            el.Capacitor("C1", "b", "0", C))
    return net


def rlc_circuit():
    """Series R-L-C driven by a sine, an R-L branch across the capacitor (an inductor in every loop)."""
    net = Network("rlc")
    net.add(el.VoltageSource("V1", "in", "0", 2 * sp.sin(2 * sp.pi * 50 * t)),
            el.Resistor("R1", "in", "a", 10.0),
            el.Inductor("L1", "a", "out", 0.1),
            el.Capacitor("C1", "out", "0", 1e-4),
            el.Resistor("R2", "out", "b", 100.0),
            el.Inductor("L2", "b", "0", 0.05))
    return net


def mechanical_network():
    """Two masses between springs and a damper, a time-varying force on the second."""
    net = Network("two_masses")
    net.add(tr.Mass("m1", "x1", m=1.5), tr.Mass("m2", "x2", m=0.5),
            tr.Spring("k1", "x1", "0", k=40.0), tr.Spring("k2", "x1", "x2", k=25.0),
            tr.Damper("c1", "x2", "0", c=0.8), tr.Force("F", "x2", 3 * sp.cos(4 * t)))
    return net


def every_element_network():
    """A network with every element kind of the library (for model-file round trips)."""
    from netdyn.lagrange.sources import pulse, pwl
    net = Network("everything")
    net.add(el.VoltageSource("V1", "in", "0", pulse(0, 5, 1e-3, 1e-4, 1e-4, 1e-3, 4e-3)),
            el.Resistor("R1", "in", "a", 1e3),
            el.Inductor("L1", "a", "0", 1e-3),
            el.Inductor("L2", "b", "0", 2e-3),
            el.MutualInductance("K1", "L1", "L2", k=0.5),
            el.Resistor("R2", "b", "0", 50.0),
            el.CoupledInductors("T1", "in", "c", "d", "0", L1=1e-3, L2=4e-3, k=0.9),
            el.Resistor("R3", "c", "0", 10.0),
            el.Resistor("R4", "d", "0", 20.0),
            el.IdealTransformer("X1", "in", "0", "e", "0", n=2),
            el.Resistor("R5", "e", "f", 33.0),
            el.Capacitor("C1", "f", "0", 1e-6),
            el.CurrentSource("I1", "0", "f", pwl([(0, 0), (1e-3, 1e-3), (2e-3, 0)])),
            el.Resistor("Rnl", "f", "0", dissipation=lambda i: 10 * i**2 / 2 + i**4))
    net.add(tr.Mass("m1", "p1", m=2.0), tr.Spring("k1", "p1", "0", k=100.0),
            tr.Damper("c1", "p1", "p2", c=1.5), tr.Mass("m2", "p2", 0.5),
            tr.Force("F1", "p1", sp.sin(3 * t)), tr.Lever("lv", "p2", "p3", 2.0),
            tr.Mass("m3", "p3", m=1.0), tr.Spring("k3", "p3", "0", energy=lambda x: 50 * x**2 + x**4),
            tr.PositionSource("xs", "p4", 0.1 * sp.sin(t)), tr.Spring("k4", "p4", "p3", k=10.0),
            tr.VelocitySource("vs", "p5", 0.2), tr.Damper("c5", "p5", "p3", c=2.0))
    net.add(rot.Inertia("J1", "w1", J=0.01), rot.TorsionSpring("kt", "w1", "w2", k=5.0),
            rot.Inertia("J2", "w2", J=0.02), rot.RotationalDamper("ct", "w2", "0", c=0.1),
            rot.Torque("tau", "w1", 0.5), rot.Gear("g1", "w2", "w3", 3.0), rot.Inertia("J3", "w3", J=0.005),
            rot.AngularVelocitySource("ws", "w4", 1.0), rot.RotationalDamper("c4", "w4", "w3", c=0.2),
            rot.AngleSource("as", "w5", sp.Rational(1, 3) * t), rot.TorsionSpring("k5", "w5", "w3", k=1.0))
    return net


def transducer_network():
    """A DC motor driving a geared load, a loudspeaker-like moving coil and an electrostatic actuator."""
    from netdyn.components import transducers as td
    net = Network("transducers")
    net.add(el.VoltageSource("V1", "in", "0", 12 * (1 - sp.exp(-50 * t))),
            td.DCMotor("M1", "in", "0", "shaft", R=1.2, L=0.05, K=0.08, J=1e-4, B=1e-5),
            rot.Inertia("Jl", "shaft", J=2e-4), rot.RotationalDamper("Bl", "shaft", "0", c=1e-3),
            el.VoltageSource("V2", "s", "0", sp.sin(100 * t)), el.Resistor("Rc", "s", "c", 8.0),
            td.MovingCoil("coil", "c", "0", "cone", Bl=5.0),
            tr.Mass("mc", "cone", m=0.01), tr.Spring("kc", "cone", "0", k=2000.0),
            el.VoltageSource("V3", "e", "0", 50.0), el.Resistor("Re", "e", "g", 1e3),
            td.ElectrostaticTransducer("E1", "g", "0", "plate", C=lambda x: 1e-9 / (1e-3 - x)),
            tr.Mass("mp", "plate", m=1e-3), tr.Spring("kp", "plate", "0", k=100.0))
    return net
