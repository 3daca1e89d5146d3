"""The book's Examples 4.1-4.4 (Fabien, Analytical System Dynamics, §4.2-4.3), typed in by hand.

Each derived equation must equal the printed one symbolically
(``simplify(derived - printed) == 0``). The printed equations are typed from the
book (for Example 4.4 the seed text is cut after T*, V and the KCL constraints;
its equations are eq. (4.6) applied to the stated T*, V, D and ψ — D is the
R1 branch's R1 q̇6²/2).
"""
import sympy as sp

from netdyn import LagrangianModel, coordinates, t


def D(q, n=1):
    return q.diff(t, n)


def assert_same(derived, printed):
    assert len(derived) == len(printed)
    for k, (d, p) in enumerate(zip(derived, printed)):
        assert sp.simplify(d - p) == 0, f"equation {k + 1}: derived {d} != printed {p}"


def test_example_4_1_two_sliders_and_a_rod():
    x, y = coordinates("x y")
    mA, mB, k, l, g = sp.symbols("m_A m_B k l g", positive=True)
    model = LagrangianModel([x, y], T=(mA * D(y)**2 + mB * D(x)**2) / 2, V=k * x**2 / 2, D=0,
                            efforts={y: -mA * g}, constraints=[x**2 + y**2 - l**2])
    lam, = model.multipliers
    printed = [mB * D(x, 2) + k * x + 2 * lam * x,
               mA * D(y, 2) + 2 * lam * y - (-mA * g),
               x**2 + y**2 - l**2]
    assert_same(model.equations(), printed)


def slider_crank():
    x1, y1, th1, x2, y2, th2, x3 = coordinates("x1 y1 theta1 x2 y2 theta2 x3")
    m1, m2, m3, I1, I2, l1, l2, tau = sp.symbols("m1 m2 m3 I1 I2 l1 l2 tau", positive=True)
    T = (m1 * (D(x1)**2 + D(y1)**2) / 2 + I1 * D(th1)**2 / 2 + m2 * (D(x2)**2 + D(y2)**2) / 2
         + I2 * D(th2)**2 / 2 + m3 * D(x3)**2 / 2)
    phi = [x1 - l1 / 2 * sp.cos(th1), y1 - l1 / 2 * sp.sin(th1),
           x2 - (l1 * sp.cos(th1) + l2 / 2 * sp.cos(th2)), y2 - (l1 * sp.sin(th1) + l2 / 2 * sp.sin(th2)),
           l1 * sp.cos(th1) + l2 * sp.cos(th2) - x3, l1 * sp.sin(th1) + l2 * sp.sin(th2)]
    model = LagrangianModel([x1, y1, th1, x2, y2, th2, x3], T=T, efforts={th1: tau}, constraints=phi)
    return model, (x1, y1, th1, x2, y2, th2, x3), (m1, m2, m3, I1, I2, l1, l2, tau), phi


def test_example_4_2_slider_crank():
    model, (x1, y1, th1, x2, y2, th2, x3), (m1, m2, m3, I1, I2, l1, l2, tau), phi = slider_crank()
    L1, L2, L3, L4, L5, L6 = model.multipliers
    s1, c1, s2, c2 = sp.sin(th1), sp.cos(th1), sp.sin(th2), sp.cos(th2)
    printed = [
        m1 * D(x1, 2) + L1,
        m1 * D(y1, 2) + L2,
        I1 * D(th1, 2) + L1 * l1 / 2 * s1 - L2 * l1 / 2 * c1 + L3 * l1 * s1 - L4 * l1 * c1 - L5 * l1 * s1
        + L6 * l1 * c1 - tau,
        m2 * D(x2, 2) + L3,
        m2 * D(y2, 2) + L4,
        I2 * D(th2, 2) + L3 * l2 / 2 * s2 - L4 * l2 / 2 * c2 - L5 * l2 * s2 + L6 * l2 * c2,
        m3 * D(x3, 2) - L5,
    ] + phi
    assert_same(model.equations(), printed)
    assert len(model.coordinates) == 7 and len(model.constraints) == 6


def four_bar():
    th1, x2, y2, th2, th3 = coordinates("theta1 x2 y2 theta2 theta3")
    m1, m2, m3, I1, I2, I3, l1, l2, l3, l4, tau = sp.symbols("m1 m2 m3 I1 I2 I3 l1 l2 l3 l4 tau", positive=True)
    T = ((I1 + m1 * l1**2 / 4) * D(th1)**2 / 2 + m2 * (D(x2)**2 + D(y2)**2) / 2 + I2 * D(th2)**2 / 2
         + (I3 + m3 * l3**2 / 4) * D(th3)**2 / 2)
    phi = [x2 - (l1 * sp.cos(th1) + l2 / 2 * sp.cos(th2)), y2 - (l1 * sp.sin(th1) + l2 / 2 * sp.sin(th2)),
           l1 * sp.cos(th1) + l2 * sp.cos(th2) - l3 * sp.cos(th3) - l4,
           l1 * sp.sin(th1) + l2 * sp.sin(th2) - l3 * sp.sin(th3)]
    model = LagrangianModel([th1, x2, y2, th2, th3], T=T, efforts={th1: tau}, constraints=phi)
    return model, (th1, x2, y2, th2, th3), (m1, m2, m3, I1, I2, I3, l1, l2, l3, l4, tau), phi


def test_example_4_3_four_bar():
    model, (th1, x2, y2, th2, th3), (m1, m2, m3, I1, I2, I3, l1, l2, l3, l4, tau), phi = four_bar()
    L1, L2, L3, L4 = model.multipliers
    s, c = sp.sin, sp.cos
    printed = [
        (I1 + m1 * l1**2 / 4) * D(th1, 2) + L1 * l1 * s(th1) - L2 * l1 * c(th1) - L3 * l1 * s(th1)
        + L4 * l1 * c(th1) - tau,
        m2 * D(x2, 2) + L1,
        m2 * D(y2, 2) + L2,
        I2 * D(th2, 2) + L1 * l2 / 2 * s(th2) - L2 * l2 / 2 * c(th2) - L3 * l2 * s(th2) + L4 * l2 * c(th2),
        (I3 + m3 * l3**2 / 4) * D(th3, 2) + L3 * l3 * s(th3) - L4 * l3 * c(th3),
    ] + phi
    assert_same(model.equations(), printed)


def rlc_network_by_hand():
    q = coordinates("q1:7")
    L1, L2, C1, C2, R1 = sp.symbols("L1 L2 C1 C2 R1", positive=True)
    v = sp.Function("v")(t)
    f = [D(qi) for qi in q]
    model = LagrangianModel(list(q), T=(L1 * f[1]**2 + L2 * f[3]**2) / 2,
                            V=q[2]**2 / (2 * C1) + q[4]**2 / (2 * C2), D=R1 * f[5]**2 / 2,
                            efforts={q[0]: v},
                            flow_constraints=[f[0] - f[1], f[1] + f[2] - f[3], f[3] + f[4] + f[5]])
    return model, q, (L1, L2, C1, C2, R1), v


def test_example_4_4_rlc_network():
    model, q, (L1, L2, C1, C2, R1), v = rlc_network_by_hand()
    mu1, mu2, mu3 = model.multipliers
    f = [D(qi) for qi in q]
    printed = [
        mu1 - v,
        L1 * D(q[1], 2) - mu1 + mu2,
        q[2] / C1 + mu2,
        L2 * D(q[3], 2) - mu2 + mu3,
        q[4] / C2 + mu3,
        R1 * f[5] + mu3,
        f[0] - f[1], f[1] + f[2] - f[3], f[3] + f[4] + f[5],
    ]
    assert_same(model.equations(), printed)
    assert len(model.mus) == 3 and not model.lambdas
