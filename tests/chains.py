"""Hand-typed n-link planar pendulum chains (slender rods) for the scale and speed tests and benchmarks."""

import sympy as sp
from netdyn import LagrangianModel, coordinates, t

def chain_relative(n, m=1.0, l=1.0, g=9.81):
    """n-link planar pendulum in relative joint angles (slender rods), hand-typed Lagrangian."""
    q = coordinates(" ".join(f"q{i+1}" for i in range(n))) if n > 1 else [coordinates("q1,")[0]]
    qd = [qi.diff(t) for qi in q]
    T, V = [], []
    th, w = 0, 0
    x = y = 0; vx = vy = 0
    for i in range(n):
        th = th + q[i]; w = w + qd[i]
        cx = x + l/2*sp.cos(th); cy = y + l/2*sp.sin(th)
        vcx = vx - l/2*sp.sin(th)*w; vcy = vy + l/2*sp.cos(th)*w
        T.append(m*(vcx**2 + vcy**2)/2 + m*l**2/12*w**2/2)
        V.append(m*g*cy)
        x = x + l*sp.cos(th); y = y + l*sp.sin(th)
        vx = vx - l*sp.sin(th)*w; vy = vy + l*sp.cos(th)*w
    return LagrangianModel(q, T=T, V=V, name=f"chain{n}")

def chain_absolute(n, m=1.0, l=1.0, g=9.81):
    """Absolute body coordinates (x_i, y_i, theta_i) + revolute joint constraints."""
    names = " ".join(f"x{i+1} y{i+1} th{i+1}" for i in range(n))
    c = coordinates(names)
    T, V, phi = [], [], []
    px, py = 0, 0
    for i in range(n):
        x, y, th = c[3*i:3*i+3]
        T.append(m*(x.diff(t)**2 + y.diff(t)**2)/2 + m*l**2/12*th.diff(t)**2/2)
        V.append(m*g*y)
        phi += [x - l/2*sp.cos(th) - px, y - l/2*sp.sin(th) - py]
        px, py = x + l/2*sp.cos(th), y + l/2*sp.sin(th)
    return LagrangianModel(c, T=T, V=V, constraints=phi, name=f"achain{n}")

