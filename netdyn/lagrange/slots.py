"""Slots the energy model leaves for the layers above it to fill.

The energy model imports nothing above itself (the layer contract in ``pyproject.toml``; ``tests/test_layers.py``
also forbids cycles through imports inside functions). Where a model offers a service of a higher layer — only
the deprecated ``LagrangianModel.export`` of netdyn 0.1 — it calls the function a higher layer put in a slot
here. The package root ``netdyn/__init__.py``, which belongs to no layer, fills the slot when netdyn is
imported, so the slot is full before any model exists.

>>> from netdyn.lagrange import slots
>>> slots.exporter() is not None       # filled by ``import netdyn``
True
"""
from netdyn.errors import ExportError

_exporter = None


def set_exporter(function):
    """Install ``function(model, format, **options)`` as the equation exporter; returns the one it replaces."""
    global _exporter
    previous, _exporter = _exporter, function
    return previous


def exporter():
    """The installed equation exporter (an :class:`~netdyn.errors.ExportError` if none is)."""
    if _exporter is None:
        raise ExportError("no equation exporter is installed; import netdyn and call "
                          "netdyn.export_equations(model, format)")
    return _exporter
