"""``gc_paused``: run a bulk build (stamping, the operating point, the transient's set-up) with Python's cyclic
garbage collector paused.

Building a 1,000-section circuit creates tens of thousands of small containers; with a few hundred thousand
objects alive (sympy's caches) each full collection the allocations trigger walks all of them, and on the
diode ladder those collections took half the stamping time. Nothing built here is garbage until it is done;
the collector runs again, as configured, as soon as the call returns (a nested call leaves it to the outer).

>>> import gc
>>> @gc_paused
... def build():
...     return gc.isenabled()
>>> build(), gc.isenabled()
(False, True)
"""
from __future__ import annotations

import functools
import gc

__all__ = ["gc_paused"]


def gc_paused(fn):
    """Decorate ``fn`` to run with the cyclic garbage collector disabled (restored afterwards, also on error)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was:
                gc.enable()
    return run
