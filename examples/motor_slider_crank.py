"""A DC motor driving the book's slider-crank (Example 4.2, 7 absolute coordinates, 6 constraints).

The planar-linkage library (netdyn.components.planar) is not on main yet, so
the mechanism is the hand-typed model :func:`netdyn.models.slider_crank`; the
motor is the :class:`~netdyn.components.transducers.DCMotor` element, whose
contribution is added on the crank angle by :func:`netdyn.models.with_motor`.
Run ``python examples/motor_slider_crank.py [out_dir]``.
"""
import sys
from pathlib import Path

import sympy as sp

import netdyn
from netdyn.components.transducers import DCMotor
from netdyn.models import slider_crank, with_motor

MOTOR = dict(R=1.0, L=0.01, K=0.05, J=2e-4, B=1e-4)
GUESS = {"theta2": -0.1, "x3": 0.4, "x1": 0.05, "y1": 0.01, "x2": 0.25, "y2": 0.01}


def build(voltage=6.0, **motor):
    """The motor + slider-crank model; ``voltage`` may be a number, an expression of t or an input function."""
    return with_motor(slider_crank(), "theta1", DCMotor("M", "a", "0", "s", **{**MOTOR, **motor}), voltage)


def main(out=Path("out")):
    out.mkdir(exist_ok=True)
    model = build()
    sol = netdyn.simulate(model, (0, 1.0), q0={"theta1": 0.3}, guess=GUESS)
    pb = sol.power_balance()
    print(f"speed after 1 s: {sol['theta1_dot'][-1]:.2f} rad/s; power balance residual {pb['relative']:.2g} relative")
    sol.plot("theta1_dot", "q_motor_dot", path=out / "motor_slider_crank.png")
    u = sp.Function("u")(netdyn.t)
    lin = netdyn.linearize(build(u), {"theta1": 0.7}, inputs=["u"], outputs=["theta1", "x3"])
    print(f"linearized at theta1 = 0.7 rad: poles {lin.poles()}")
    return sol, lin


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out"))
