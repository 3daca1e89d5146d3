"""Sources' waveforms as stack programs a compiled kernel evaluates: ``u(t)`` without a call back into Python.

A SPICE source (DC, SIN, PULSE, PWL, a step; :mod:`netdyn.lagrange.sources`) is a sympy expression of
``t``: sums, products, powers, ``sin``, ``cos``, ``exp``, ``log``, ``floor``, ``Abs``, a periodic
``Sawtooth`` and ``Piecewise`` with comparisons. :func:`compile_sources` turns each into postfix
operations (``Piecewise`` into conditional jumps, so only the branch taken is evaluated) and
:func:`netdyn.numerics.circuit.kernels.circuit_kernel.source_values` runs them. An expression with anything else
(a tabulated function, a user callable) gives ``None``: the caller evaluates it in Python.

>>> import numpy as np, sympy as sp
>>> from netdyn.symbols import t
>>> from netdyn.lagrange.sources import pulse, sine
>>> from netdyn.numerics.circuit.kernels.circuit_kernel import source_values
>>> exprs = [sine(1, 5, 1e3, delay=1e-4, phase_deg=30), pulse(0, 2, 1e-4, 1e-5, 1e-5, 2e-4, 5e-4)]
>>> prog = compile_sources(exprs)
>>> u = np.zeros(2)
>>> ok = []
>>> for x in (0.0, 3.3e-4, 7.77e-4):
...     source_values(*prog, x, u)
...     ok.append(np.allclose(u, [float(e.subs(t, x)) for e in exprs], rtol=1e-13, atol=1e-15))
>>> ok
[True, True, True]
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from netdyn.lagrange.sources import Sawtooth
from netdyn.symbols import t as T_SYM

__all__ = ["compile_sources", "OPS"]

#: operation codes (the kernel's ``source_values`` reads the same numbers)
OPS = dict(CONST=0, T=1, ADD=2, MUL=3, POW=4, SIN=5, COS=6, EXP=7, LOG=8, SAW=9, LT=10, LE=11, GT=12, GE=13,
           AND=14, OR=15, JZ=16, JMP=17, FLOOR=18, ABS=19, NOT=20, NAN=21, EQ=22, NE=23)
_FUNCS = {sp.sin: "SIN", sp.cos: "COS", sp.exp: "EXP", sp.log: "LOG", sp.floor: "FLOOR", sp.Abs: "ABS"}
_RELS = {sp.StrictLessThan: "LT", sp.LessThan: "LE", sp.StrictGreaterThan: "GT", sp.GreaterThan: "GE",
         sp.Equality: "EQ", sp.Unequality: "NE"}


class _Unsupported(Exception):
    pass


def _emit(e, code):
    """Append the postfix code of ``e`` to ``code`` (a list of [op, arg]); jumps hold code indices."""
    if e is sp.true or e is True:
        code.append([OPS["CONST"], 1.0])
    elif e is sp.false or e is False:
        code.append([OPS["CONST"], 0.0])
    elif e == T_SYM:
        code.append([OPS["T"], 0.0])
    elif e.is_number:
        val = complex(sp.N(e, 17))
        if val.imag != 0:
            raise _Unsupported(e)
        code.append([OPS["CONST"], val.real])
    elif e.free_symbols - {T_SYM}:
        raise _Unsupported(e)
    elif isinstance(e, (sp.Add, sp.Mul, sp.And, sp.Or)):
        for a in e.args:
            _emit(a, code)
        name = {sp.Add: "ADD", sp.Mul: "MUL", sp.And: "AND", sp.Or: "OR"}[type(e)]
        code.append([OPS[name], float(len(e.args))])
    elif isinstance(e, sp.Pow):
        _emit(e.base, code)
        _emit(e.exp, code)
        code.append([OPS["POW"], 0.0])
    elif isinstance(e, sp.Not):
        _emit(e.args[0], code)
        code.append([OPS["NOT"], 0.0])
    elif type(e) in _RELS:
        _emit(e.lhs, code)
        _emit(e.rhs, code)
        code.append([OPS[_RELS[type(e)]], 0.0])
    elif isinstance(e, Sawtooth):
        _emit(e.args[0], code)
        _emit(e.args[1], code)
        code.append([OPS["SAW"], 0.0])
    elif e.func in _FUNCS and len(e.args) == 1:
        _emit(e.args[0], code)
        code.append([OPS[_FUNCS[e.func]], 0.0])
    elif isinstance(e, sp.Piecewise):
        ends = []
        for expr, cond in e.args:
            _emit(cond, code)
            jz = len(code)
            code.append([OPS["JZ"], -1.0])
            _emit(expr, code)
            ends.append(len(code))
            code.append([OPS["JMP"], -1.0])
            code[jz][1] = float(len(code))
        code.append([OPS["NAN"], 0.0])  # no branch taken: undefined, as sympy's Piecewise
        for j in ends:
            code[j][1] = float(len(code))
    else:
        raise _Unsupported(e)


def compile_sources(exprs):
    """``(ops, args, ptr)``: the programs of ``exprs`` one after the other (program ``j`` is
    ``ops[ptr[j]:ptr[j + 1]]``), or ``None`` when one has a function the kernel does not know.

    Kept by the expressions (a switched circuit's segments and event trials compile the same sources again);
    the arrays are read, never written, by the kernel."""
    key = tuple(sp.sympify(e) for e in exprs)
    if key not in _COMPILED:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = _compile_sources(key)
    return _COMPILED[key]


_COMPILED = {}


def _compile_sources(exprs):
    ops, args, ptr = [], [], [0]
    for expr in exprs:
        code = []
        try:
            _emit(sp.sympify(expr), code)
        except _Unsupported:
            return None
        ops += [int(c[0]) for c in code]
        args += [c[1] for c in code]
        ptr.append(len(ops))
    return np.array(ops, dtype=np.int64), np.array(args, dtype=float), np.array(ptr, dtype=np.int64)
