"""SPICE-style source waveforms as sympy expressions of time.

Every waveform is an ordinary sympy expression of ``netdyn.t`` (``Piecewise``,
``sin``, ``exp``), so it can be differentiated, lambdified to numpy and
exported like any other part of a model.  The definitions are those of SPICE
(ngspice ``SIN``, ``PULSE`` and ``PWL``), so a netlist simulated by netdyn and
by ngspice sees the same source:

>>> import numpy as np, sympy as sp
>>> from netdyn.symbols import t
>>> from netdyn.lagrange.sources import pulse, spice_form
>>> v = pulse(0, 5, delay=1e-3, rise=1e-4, fall=1e-4, width=1e-3, period=4e-3)
>>> f = sp.lambdify(t, v, "numpy")
>>> np.round(f(np.array([0.0, 1.05e-3, 1.5e-3, 5.5e-3, 8.0e-3])), 12).tolist()
[0.0, 2.5, 5.0, 5.0, 0.0]

Each waveform built here remembers its SPICE form, so
:func:`netdyn.io.spice.write_netlist` writes it back as the same card:

>>> spice_form(v)
'PULSE(0 5 0.001 0.0001 0.0001 0.001 0.004)'

Periodic waveforms use :class:`Sawtooth` (``x`` modulo ``p``), a sympy function
whose derivative with respect to ``x`` is 1, so ``diff`` of a periodic pulse
is a clean piecewise constant that lambdifies (sympy's own ``Mod`` and ``floor``
leave unevaluated derivatives behind).
"""
from __future__ import annotations
import numbers

import sympy as sp

from netdyn.errors import ElementError
from netdyn.symbols import t

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = ["step", "sine", "pulse", "pwm", "pwl", "spice_form", "breakpoints", "corners", "corner_schedule", "Sawtooth"]

# expression -> (kind, args): how the expression is written as a SPICE source.
_SPICE_FORMS = {}


class Sawtooth(sp.Function):
    """``Sawtooth(x, p)`` is ``x`` modulo ``p`` in ``[0, p)`` (for ``p > 0``).

    Unlike ``sympy.Mod`` its derivative with respect to ``x`` is 1 (almost
    everywhere), and it prints as ``x - p*floor(x/p)`` for numpy, math and C.

    >>> import numpy as np, sympy as sp
    >>> x = sp.Symbol("x")
    >>> Sawtooth(7, 3)
    1
    >>> sp.diff(Sawtooth(2*x, 3), x)
    2
    >>> sp.lambdify(x, Sawtooth(x, 2), "numpy")(np.array([-0.5, 0.5, 2.5]))
    array([1.5, 0.5, 0.5])
    """

    nargs = 2

    @classmethod
    def eval(cls, x, p):
        if x.is_Number and p.is_Number:
            if p.is_zero:
                raise ElementError("Sawtooth: the period must not be zero")
            return x - p * sp.floor(x / p)
        return None

    def fdiff(self, argindex=1):
        x, p = self.args
        if argindex == 1:
            return sp.S.One
        if argindex == 2:
            return -sp.floor(x / p)
        raise sp.ArgumentIndexError(self, argindex)

    def _eval_is_real(self):
        x, p = self.args
        return (x.is_real and p.is_real) or None

    def _eval_is_nonnegative(self):
        x, p = self.args
        if x.is_real and p.is_positive:
            return True
        return None

    def _eval_rewrite_as_floor(self, x, p, **kwargs):
        return x - p * sp.floor(x / p)

    def _eval_evalf(self, prec):
        x, p = [a.evalf(prec) for a in self.args]
        if x.is_Number and p.is_Number:
            return (x - p * sp.floor(x / p)).evalf(prec)
        return None

    def _as_floor(self):
        x, p = self.args
        return x - p * sp.floor(x / p)

    def _print_as_floor(self, printer, **kwargs):
        # Parenthesized: the printer places the result inside products and sums.
        return "(%s)" % printer._print(self._as_floor(), **kwargs)

    def _latex(self, printer, **kwargs):
        x, p = self.args
        return r"\left(%s \bmod %s\right)" % (printer._print(x), printer._print(p))


# Code printers find a ``_<language>code``-style method on the expression
# (Printer.printmethod); every code printer that knows ``floor`` prints
# Sawtooth as ``x - p*floor(x/p)``.
for _name in ("_pythoncode", "_numpycode", "_scipycode", "_cupycode", "_jaxcode", "_mpmathcode",
              "_cmathcode", "_lambdacode", "_tensorflowcode", "_torchcode", "_ccode", "_cxxcode",
              "_fcode", "_octave", "_julia", "_rust_code", "_javascript", "_glsl", "_rcode",
              "_mcode", "_maple"):
    setattr(Sawtooth, _name, Sawtooth._print_as_floor)
del _name


def _num(value, what):
    """A waveform argument as a sympy number or expression (no time in it)."""
    if isinstance(value, bool):
        raise ElementError(f"{what} must be a number, not {value!r}")
    if isinstance(value, numbers.Number):
        if isinstance(value, complex):
            raise ElementError(f"{what} must be real, not {value!r}")
        return sp.Float(value) if isinstance(value, float) else sp.sympify(value)
    try:
        expr = sp.sympify(value)
    except (sp.SympifyError, TypeError) as exc:
        raise ElementError(f"{what} must be a number or sympy expression, not {value!r}") from exc
    if t in expr.free_symbols:
        raise ElementError(f"{what} must not depend on time t")
    return expr


def _is_zero(x):
    return x.is_zero is True


def _check_nonnegative(x, what):
    if x.is_negative:
        raise ElementError(f"{what} must not be negative (got {x})")


def _remember(expr, kind, args):
    _SPICE_FORMS[expr] = (kind, tuple(args))
    return expr


def _fmt(x):
    x = sp.sympify(x)
    if x.is_Integer:
        return str(int(x))
    if x.is_Number:
        f = float(x)
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)
    return "{%s}" % sp.sstr(x)


def spice_form(expr):
    """The SPICE source text (``"SIN(...)"``, ``"PULSE(...)"``, ...) of a waveform, or None.

    Numbers (and expressions free of time) give ``"DC value"``.  Waveforms
    built by this module give their card; any other expression of time gives
    None.

    >>> spice_form(sine(1, 2, 50))
    'SIN(1 2 50 0 0 0)'
    >>> spice_form(pwl([(0, 0), (1e-3, 1)]))
    'PWL(0 0 0.001 1)'
    >>> spice_form(3.3)
    'DC 3.3'
    >>> spice_form(t**2) is None
    True
    """
    expr = sp.sympify(expr)
    form = _SPICE_FORMS.get(expr)
    if form is None:
        if t not in expr.free_symbols:
            return "DC " + _fmt(expr)
        return None
    kind, args = form
    if kind == "STEP":
        amplitude, t0 = args
        if _is_zero(t0):
            return "DC " + _fmt(amplitude)
        # An edge 1e-9 of the delay long: SPICE has no ideal step after t = 0.
        return "PWL(0 0 %s 0 %s %s)" % (_fmt(t0), _fmt(t0 * (1 + sp.Float(1e-9))), _fmt(amplitude))
    if kind == "PWL":
        return "PWL(" + " ".join(_fmt(a) for a in args) + ")"
    return kind + "(" + " ".join(_fmt(a) for a in args) + ")"


def breakpoints(expr, t_end, t_start=0.0):
    """Times in ``(t_start, t_end)`` where a waveform has a corner or a jump, sorted.

    An integrator that stops at these times (as SPICE does) never steps across
    a corner of a ``PULSE`` or ``PWL`` source.  Waveforms of this module know
    their corners exactly (periodic ones are enumerated up to ``t_end``); for
    any other expression the ``Piecewise`` conditions comparing ``t`` with a
    number are used.  Sums and products of waveforms give the union.

    >>> breakpoints(pulse(0, 1, delay=1, rise=0.5, fall=0.5, width=1, period=4), 10)
    [1.0, 1.5, 2.5, 3.0, 5.0, 5.5, 6.5, 7.0, 9.0, 9.5]
    >>> breakpoints(pwl([(0, 0), (2, 1), (3, 0)]) + sine(0, 1, 1, delay=0.5), 10)
    [0.5, 2.0, 3.0]
    >>> breakpoints(sine(0, 1, 50), 1)
    []
    """
    t_start, t_end = float(t_start), float(t_end)
    found = set()

    def add(x):
        try:
            x = float(x)
        except TypeError:
            return
        if t_start < x < t_end:
            found.add(x)

    def visit(e):
        form = _SPICE_FORMS.get(e)
        if form is not None:
            kind, args = form
            if kind == "STEP":
                add(args[1])
            elif kind == "SIN":
                add(args[3])
            elif kind == "PWL":
                for x in args[0::2]:
                    add(x)
            elif kind == "PULSE":
                v1, v2, td, tr, tf = args[:5]
                pw = args[5] if len(args) > 5 else None
                per = args[6] if len(args) > 6 else None
                corners = [0, tr] if pw is None else [0, tr, tr + pw, tr + pw + tf]
                if per is None:
                    for c in corners:
                        add(td + c)
                else:
                    per_f, td_f = float(per), float(td)
                    k = 0
                    while td_f + k * per_f < t_end:
                        for c in corners:
                            add(td_f + k * per_f + float(c))
                        k += 1
            return
        if isinstance(e, sp.Piecewise):
            for _, cond in e.args:
                for rel in ([cond] if isinstance(cond, sp.core.relational.Relational)
                            else list(cond.atoms(sp.core.relational.Relational))):
                    lhs, rhs = rel.lhs - rel.rhs, None
                    if lhs.free_symbols == {t} and lhs.is_polynomial(t) and sp.degree(lhs, t) == 1:
                        rhs = sp.solve(lhs, t)
                        for r in rhs:
                            add(r)
        for a in e.args:
            if isinstance(a, sp.Basic) and a.free_symbols & {t}:
                visit(a)

    visit(sp.sympify(expr))
    return sorted(found)



def corners(expressions: Iterable[Any], t_start: float, t_end: float) -> list[float]:
    """The union of the :func:`breakpoints` of ``expressions`` (numbers allowed) strictly inside
    ``(t_start, t_end)``, sorted: where every path of ``simulate`` stops and restarts, as SPICE does.

    >>> corners([pwl([(0, 0), (2, 1), (3, 0)]), 5.0, step(1, 2.5)], 0, 10)
    [2.0, 2.5, 3.0]
    """
    found = set()
    for e in expressions:
        e = sp.sympify(e)
        if t in e.free_symbols:
            found.update(breakpoints(e, t_end, t_start))
    return sorted(found)

def corner_schedule(expressions: Iterable[Any], t_start: float = 0.0) -> Any:
    """Every corner of ``expressions`` after ``t_start``, without an end time: ``(times, families)`` with
    the corners of aperiodic waveforms as sorted ``times`` and those of a periodic ``PULSE`` as
    ``families`` of ``(first, period)`` pairs (corners at ``first + k period``, k = 0, 1, ...). For code that
    runs without a known end (an FMU's time events); :func:`corners` lists them up to an end time.

    >>> corner_schedule([pwl([(0, 0), (2, 1)]) + pulse(0, 1, delay=1, rise=0.5, fall=0.5, width=1, period=4)])
    ([2.0], [(1.0, 4.0), (1.5, 4.0), (2.5, 4.0), (3.0, 4.0)])
    """
    times, families = set(), set()

    def visit(e):
        form = _SPICE_FORMS.get(e)
        if form is not None and form[0] == "PULSE" and len(form[1]) > 6:
            v1, v2, td, tr, tf, pw, per = (float(x) for x in form[1])
            for c in (0.0, tr, tr + pw, tr + pw + tf):
                families.add((td + c, per))
            return
        if form is not None:
            times.update(breakpoints(e, float("inf"), t_start))
            return
        if isinstance(e, sp.Piecewise):  # its own conditions here; waveforms inside it by the recursion
            times.update(breakpoints(sp.Piecewise(*[(sp.Integer(k), c) for k, (_, c) in enumerate(e.args)]),
                                      float("inf"), t_start))
        for a in e.args:
            if isinstance(a, sp.Basic) and a.free_symbols & {t}:
                visit(a)

    for e in expressions:
        e = sp.sympify(e)
        if t in e.free_symbols:
            visit(e)
    return sorted(times), sorted(families)


def step(amplitude: Any, t0: Any = 0) -> sp.Expr:
    """A step: 0 before ``t0``, ``amplitude`` from ``t0`` on (value ``amplitude`` at ``t0``).

    >>> from netdyn.symbols import t
    >>> v = step(5, t0=1)
    >>> [v.subs(t, x) for x in (0, 1, 2)]
    [0, 5, 5]
    >>> step(2)
    2
    """
    amplitude = _num(amplitude, "step amplitude")
    t0 = _num(t0, "step time t0")
    _check_nonnegative(t0, "step time t0")
    if _is_zero(t0):
        # For t >= 0 a step at 0 is the constant (what SPICE's DC source is).
        return amplitude
    expr = sp.Piecewise((sp.S.Zero, t < t0), (amplitude, True))
    return _remember(expr, "STEP", (amplitude, t0))


def sine(offset: Any, amplitude: Any, freq: Any, delay: Any = 0, damping: Any = 0, phase_deg: Any = 0) -> sp.Expr:
    """SPICE ``SIN(VO VA FREQ TD THETA PHASE)``.

    ``offset + amplitude*sin(phase)`` before ``delay``; from ``delay`` on
    ``offset + amplitude*exp(-damping*(t-delay))*sin(2*pi*freq*(t-delay) + phase)``,
    with the phase in degrees (ngspice's convention).

    >>> import math
    >>> from netdyn.symbols import t
    >>> v = sine(1, 2, 50, delay=0.01, phase_deg=90)
    >>> float(v.subs(t, 0.0))      # before the delay: VO + VA*sin(phase)
    3.0
    >>> round(float(v.subs(t, 0.015)), 12)
    1.0
    >>> sine(0, 1, 50)
    sin(100*pi*t)
    """
    offset = _num(offset, "SIN offset")
    amplitude = _num(amplitude, "SIN amplitude")
    freq = _num(freq, "SIN frequency")
    delay = _num(delay, "SIN delay")
    damping = _num(damping, "SIN damping")
    phase_deg = _num(phase_deg, "SIN phase")
    _check_nonnegative(delay, "SIN delay")
    if _is_zero(freq):
        raise ElementError("SIN frequency must not be zero (SPICE would use 1/tstop; give it explicitly)")
    phase = phase_deg * sp.pi / 180
    tau = t - delay
    running = offset + amplitude * sp.sin(2 * sp.pi * freq * tau + phase)
    if not _is_zero(damping):
        running = offset + amplitude * sp.exp(-damping * tau) * sp.sin(2 * sp.pi * freq * tau + phase)
    if _is_zero(delay):
        expr = running
    else:
        expr = sp.Piecewise((offset + amplitude * sp.sin(phase), t < delay), (running, True))
    return _remember(expr, "SIN", (offset, amplitude, freq, delay, damping, phase_deg))


def pwm(low: Any, high: Any, frequency: Any, duty: Any, delay: Any = 0, edge: Any = 0) -> sp.Expr:
    """A pulse-width-modulated wave: ``high`` for ``duty`` of each period ``1/frequency``, ``low`` for the
    rest, from ``delay`` on; ``edge`` the rise and fall time (0: ideal edges). It is :func:`pulse` with
    ``period = 1/frequency`` and ``width = duty/frequency - edge`` (SPICE decks write PULSE for it), so its
    corners are time events every path steps onto exactly.

    >>> import numpy as np, sympy as sp
    >>> from netdyn.symbols import t
    >>> f = sp.lambdify(t, pwm(0, 5, 100e3, 0.25), "numpy")
    >>> f(np.array([1e-6, 3e-6, 11e-6])).tolist()
    [5.0, 0.0, 5.0]
    """
    frequency, duty, edge = (_num(x, what) for x, what in ((frequency, "PWM frequency"), (duty, "PWM duty"),
                                                            (edge, "PWM edge time")))
    if frequency.is_number and not frequency.is_positive:
        raise ElementError(f"PWM frequency must be positive, got {frequency}")
    if duty.is_number and not (0 < float(duty) < 1):
        raise ElementError(f"PWM duty must lie strictly between 0 and 1, got {duty}")
    width = duty / frequency - edge
    if width.is_number and width < 0:
        raise ElementError(f"PWM edge time {edge} is longer than the pulse ({duty}/{frequency} s)")
    return pulse(low, high, delay, edge, edge, width, 1 / frequency)


def pulse(v1: Any, v2: Any, delay: Any = 0, rise: Any = 0, fall: Any = 0, width: Any = None,
          period: Any = None) -> sp.Expr:
    """SPICE ``PULSE(V1 V2 TD TR TF PW PER)``.

    ``v1`` until ``delay``, a linear rise to ``v2`` over ``rise``, ``v2`` for
    ``width``, a linear fall to ``v1`` over ``fall``, then ``v1``; repeated
    every ``period`` from ``delay`` on when ``period`` is given.  A zero rise
    or fall is an ideal edge (SPICE would substitute its time step; the
    netlist reader does that for you).  ``width=None`` stays at ``v2``.

    >>> import numpy as np, sympy as sp
    >>> from netdyn.symbols import t
    >>> v = pulse(-1, 1, delay=1, rise=1, fall=2, width=1)
    >>> [float(v.subs(t, x)) for x in (0, 1.5, 2.5, 4, 5, 9)]
    [-1.0, 0.0, 1.0, 0.0, -1.0, -1.0]
    >>> f = sp.lambdify(t, pulse(0, 1, 0, 0.1, 0.1, 0.3, period=1), "numpy")
    >>> np.round(f(np.array([0.05, 0.2, 1.2, 2.45, 2.7])), 12).tolist()
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    v1 = _num(v1, "PULSE initial value V1")
    v2 = _num(v2, "PULSE pulsed value V2")
    delay = _num(delay, "PULSE delay")
    rise = _num(rise, "PULSE rise time")
    fall = _num(fall, "PULSE fall time")
    for x, what in ((delay, "PULSE delay"), (rise, "PULSE rise time"), (fall, "PULSE fall time")):
        _check_nonnegative(x, what)
    if width is not None:
        width = _num(width, "PULSE width")
        _check_nonnegative(width, "PULSE width")
    if period is not None:
        period = _num(period, "PULSE period")
        if not period.is_positive and period.is_number:
            raise ElementError(f"PULSE period must be positive (got {period})")
        if width is None:
            raise ElementError("a periodic PULSE needs a width")
        if period.is_number and (rise + width + fall).is_number and (rise + width + fall - period).is_positive:
            raise ElementError(
                f"PULSE rise + width + fall ({rise + width + fall}) is longer than the period ({period})")

    tau = t - delay
    x = Sawtooth(tau, period) if period is not None else tau
    pieces = [(v1, tau < 0)]
    if not _is_zero(rise):
        pieces.append((v1 + (v2 - v1) * x / rise, x < rise))
    if width is None:
        pieces.append((v2, True))
    else:
        pieces.append((v2, x < rise + width))
        if not _is_zero(fall):
            pieces.append((v2 + (v1 - v2) * (x - rise - width) / fall, x < rise + width + fall))
        pieces.append((v1, True))
    expr = sp.Piecewise(*pieces)
    args = [v1, v2, delay, rise, fall]
    if width is not None:
        args.append(width)
        if period is not None:
            args.append(period)
    return _remember(expr, "PULSE", args)


def pwl(points: Sequence[Sequence[Any]]) -> sp.Expr:
    """SPICE ``PWL(t1 v1 t2 v2 ...)``: straight lines through ``points``.

    The first value holds before the first time and the last value after the
    last time.  Times must increase strictly.

    >>> from netdyn.symbols import t
    >>> v = pwl([(0, 0), (1, 2), (3, -2)])
    >>> [float(v.subs(t, x)) for x in (-1, 0.5, 2, 3, 10)]
    [0.0, 1.0, 0.0, -2.0, -2.0]
    """
    try:
        pts = [(_num(a, "PWL time"), _num(b, "PWL value")) for a, b in points]
    except (TypeError, ValueError) as exc:
        raise ElementError(f"PWL points must be (time, value) pairs, got {points!r}") from exc
    if not pts:
        raise ElementError("PWL needs at least one (time, value) point")
    for (ta, _), (tb, _) in zip(pts, pts[1:]):
        if isinstance(ta, sp.Float) and isinstance(tb, sp.Float):
            if not float(tb) > float(ta):
                raise ElementError(f"PWL times must increase strictly (got {ta} then {tb})")
            continue
        if not (tb - ta).is_positive and (tb - ta).is_number:
            raise ElementError(f"PWL times must increase strictly (got {ta} then {tb})")
    if len(pts) == 1:
        expr = pts[0][1]
        return expr
    pieces = [(pts[0][1], t < pts[0][0])]
    numeric = all(isinstance(x, sp.Float) for p in pts for x in p)
    for (ta, va), (tb, vb) in zip(pts, pts[1:]):
        if numeric:  # the same a + b t sympy's Float arithmetic gives, without its cost (1000 corners: ms, not s)
            slope = (float(vb) - float(va)) / (float(tb) - float(ta))
            line = sp.Float(float(va) - slope * float(ta)) + sp.Float(slope) * t if slope else va
            pieces.append((line, t < tb))
            continue
        pieces.append((va + (vb - va) * (t - ta) / (tb - ta), t < tb))
    pieces.append((pts[-1][1], True))
    expr = sp.Piecewise(*pieces)
    return _remember(expr, "PWL", [x for p in pts for x in p])
