"""SPICE numbers: ``10u``, ``2.2meg``, ``1kOhm`` as floats (the base of netdyn's value checks, free of numpy and
sympy so that the command line can read its arguments before loading either)."""
from __future__ import annotations

import math
import re

from netdyn.errors import ParseError

__all__ = ["parse_value", "SCALE", "UNIT_WORDS", "NUMBER"]

SCALE = {"f": 1e-15, "p": 1e-12, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "m": 1e-3,
         "k": 1e3, "g": 1e9, "t": 1e12}
UNIT_WORDS = frozenset({
    "", "v", "volt", "volts", "a", "amp", "amps", "ohm", "ohms", "f", "farad", "farads",
    "h", "henry", "henries", "hz", "s", "sec", "secs", "deg",
})
NUMBER = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([A-Za-zµμ]*)$")


def parse_value(token: str, line: int | None = None) -> float:
    """A SPICE number with optional scale factor and unit name, as a float.

    >>> parse_value("10uF"), parse_value("1kOhm"), parse_value("2.2meg"), parse_value("1e-3")
    (1e-05, 1000.0, 2200000.0, 0.001)
    >>> parse_value("3mil")
    7.62e-05
    >>> parse_value("10x")
    Traceback (most recent call last):
    ...
    netdyn.errors.ParseError: unknown unit suffix 'x' in '10x'; use a scale factor (f p n u m k meg g t mil) optionally followed by a unit name (F, H, Ohm, V, A, s, Hz)
    """
    m = NUMBER.match(token)
    if not m:
        raise ParseError(f"{token!r} is not a number (parameters go in braces: {{name}})", line)
    mantissa, suffix = m.groups()
    number = float(mantissa)
    s = suffix.lower()
    scale = 1.0
    if s.startswith("meg"):
        scale, rest = 1e6, s[3:]
    elif s.startswith("mil"):
        scale, rest = 25.4e-6, s[3:]
    elif s[:1] in SCALE:
        scale, rest = SCALE[s[:1]], s[1:]
    else:
        rest = s
    if rest not in UNIT_WORDS:
        bad = suffix if scale == 1.0 else suffix[len(suffix) - len(rest):]
        raise ParseError(
            f"unknown unit suffix {bad!r} in {token!r}; use a scale factor (f p n u m k meg g t mil) "
            "optionally followed by a unit name (F, H, Ohm, V, A, s, Hz)", line)
    result = number * scale
    if not math.isfinite(result):
        raise ParseError(f"{token!r} is not a finite number", line)
    # round-off of the product: 2.2 * 1e6 must print as 2200000.0, not 2200000.0000000005
    return float(f"{result:.15g}")
