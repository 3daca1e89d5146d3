"""The types the public API's hints name (``netdyn`` ships ``py.typed``; mypy checks them in CI).

Only aliases, no code: modules import them under ``typing.TYPE_CHECKING`` (their annotations are strings,
``from __future__ import annotations``), so nothing here costs an import at run time.

>>> from netdyn.hints import PathArg
>>> PathArg
typing.Union[str, ForwardRef('os.PathLike[str]')]
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, Union

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import sympy

#: a file path: a ``str`` or any ``os.PathLike`` (``pathlib.Path``)
PathArg: TypeAlias = Union[str, "os.PathLike[str]"]
#: an element value: a number, a SPICE number as text (``"1k"``), a parameter's name, or a sympy expression
#: (of ``netdyn.t`` for sources)
Value: TypeAlias = Union[float, str, "sympy.Expr"]
#: ``(t_start, t_end)``
TimeSpan: TypeAlias = Sequence[float]
#: ``q0``, ``f0`` and ``guess``: names (coordinates, joints, joint coordinates) to a value, or to a list of
#: values for a multi-coordinate joint
Initial: TypeAlias = Mapping[str, Union[float, Sequence[float]]]
#: ``params=``: a parameter (its name or its sympy symbol) to a value
Params: TypeAlias = Mapping[Union[str, "sympy.Symbol"], Any]
#: the formulation of a network: one for every domain, or a dict per domain
Formulation: TypeAlias = Union[str, Mapping[str, str], None]
#: numbers numpy takes
ArrayLike: TypeAlias = "npt.ArrayLike"
#: an array of floats (a series over the output times, a matrix)
Array: TypeAlias = "npt.NDArray[np.float64]"

__all__ = ["Array", "ArrayLike", "Formulation", "Initial", "Params", "PathArg", "TimeSpan", "Value"]
