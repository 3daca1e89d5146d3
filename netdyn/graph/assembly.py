"""How a network assembles: the configuration a mechanism starts from, stored on the network.

A closed linkage has several assemblies (a four-bar's elbow up and elbow down), and the position solve
that starts a simulation finds the one nearest its starting values. A network therefore carries an
:class:`Assembly`: a ``guess`` (starting values of that solve: which branch), and, when the user gives
them, ``q0`` and ``f0`` (initial values held, as :func:`netdyn.simulate` takes them). The ready-made
linkages of :mod:`netdyn.linkages` set one; model files save and load it (``assembly:``, format version 2);
``netdyn simulate FILE`` uses it.

Every call that takes these arguments fills what the caller did not give from the network's assembly —
:func:`netdyn.simulate` (:meth:`netdyn.numerics.problem.Problem.from_call`), ``mobility``,
``assemble_configuration``, ``kinematics``, ``inverse_dynamics``, ``linearize`` and ``equilibrium`` (their
``guess``) — argument by argument: a ``guess=``, ``q0=`` or ``f0=`` given replaces the stored one whole
(a stored value under another name for the same joint could contradict it), so a call that passes all
three runs exactly as it did before networks knew their assembly.

Names are those :func:`netdyn.simulate` takes: coordinates (``x_rod``, ``theta_rod``; a spatial body's
``x_``, ``y_``, ``z_``, ``e0_`` … ``e3_``), joint coordinates (``"O"``, ``"theta_O"``, ``"s_P"``; spatial:
``thetaz_R1`` …), and for other elements a coordinate of an element or a node (``q_La``, ``x_mass``);
``f0`` also takes ``<name>_dot``. They are checked against the network when stored (a name that names
none of its bodies, joints, elements or nodes is a :class:`~netdyn.errors.ModelError`), values must be
finite real numbers (a multi-coordinate joint: a list of them).

>>> from netdyn.linkages import four_bar
>>> net = four_bar()
>>> sorted(net.assembly.guess)[:3]
['theta_crank', 'theta_rocker', 'theta_rod']
>>> _ = net.set_assembly(q0={"O": 0.4})          # keeps the stored guess
>>> net.assembly.q0, net.assembly.f0
({'O': 0.4}, None)
>>> fill(net, q0=None, f0=None, guess={"theta_rod": 0.9})[0]   # the caller's guess replaces the stored one
{'O': 0.4}
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from netdyn.errors import InvalidValueError, ModelError
from netdyn.symbols import identifier
from netdyn.validate import real

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for the hints only (annotations are not evaluated)
    from netdyn.hints import Initial
    from typing import Any

#: the three parts of an assembly, in the order files and messages list them
PARTS = ("guess", "q0", "f0")
#: coordinate prefixes of a planar and a spatial body (absolute formulation)
PLANAR_BODY = ("x", "y", "theta")
SPATIAL_BODY = ("x", "y", "z", "e0", "e1", "e2", "e3")
_COORDINATE = re.compile(r"^([A-Za-z][A-Za-z0-9]*)_(.+?)(?:_(\d+))?$")
#: most values one name may carry (a Slider's (s, theta) pair; a little room)
MAX_VALUES = 6
#: most names one part may hold (a file's assembly is untrusted input)
MAX_NAMES = 100_000


class Values(dict):
    """A read-only dict of names to values (one part of an :class:`Assembly`): ``dict(...)`` copies it."""

    def _read_only(self, *args, **kwargs):
        raise TypeError("an assembly's values are read-only; use net.set_assembly(...) to change them")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return (Values, (dict(self),))


def _frozen(values):
    return None if values is None else Values(values)


@dataclass(frozen=True)
class Assembly:
    """A network's assembly: ``guess`` (starting values of the position solve), ``q0`` and ``f0`` (initial
    values, as :func:`netdyn.simulate` takes them); each a read-only dict of names to values (:class:`Values`),
    or ``None``.

    Build one with checked values through :meth:`netdyn.Network.set_assembly` (or assign
    ``net.assembly = Assembly(...)``, which checks it against the network the same way).

    >>> a = Assembly(guess={"theta_rod": 0.9})
    >>> bool(a), a.as_dict()
    (True, {'guess': {'theta_rod': 0.9}})
    >>> bool(Assembly())
    False
    """

    guess: Initial | None = None
    q0: Initial | None = None
    f0: Initial | None = None

    def __post_init__(self) -> None:
        for part in PARTS:
            object.__setattr__(self, part, _frozen(getattr(self, part)))

    def __bool__(self) -> bool:
        return any(getattr(self, part) for part in PARTS)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """The parts that are set, as plain dicts (what a model file stores under ``assembly:``)."""
        return {part: _plain(getattr(self, part)) for part in PARTS if getattr(self, part) is not None}

    def replace(self, **parts: Initial | None) -> Assembly:
        """A new assembly with ``parts`` replaced (``None`` keeps a part, ``{}`` clears it)."""
        given = {k: v for k, v in parts.items() if v is not None}
        return Assembly(**{part: given.get(part, getattr(self, part)) for part in PARTS})

    def __repr__(self):
        inner = ", ".join(f"{part}={dict(getattr(self, part))!r}" for part in PARTS if getattr(self, part) is not None)
        return f"Assembly({inner})"


def _plain(values):
    return {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in values.items()}


# ------------------------------------------------------------------------------------------ names

def accepted_names(net):
    """``(exact, things)``: the coordinate and joint-coordinate names of a network's bodies and joints
    (every formulation), and the identifiers of its other elements and nodes (whose coordinates are
    ``<prefix>_<element or node>``, e.g. ``q_La``, ``x_mass``, ``phi_in``)."""
    exact = set()
    for name, body in net.bodies.items():
        prefixes = SPATIAL_BODY if getattr(body, "domain", "planar") == "spatial" else PLANAR_BODY
        exact.update(f"{p}_{identifier(name)}" for p in prefixes)
    things = set()
    for name, el in net.elements.items():
        if getattr(el, "is_joint", False):
            kinds = getattr(el, "relative", None)
            if kinds is None and hasattr(el, "relative_names"):  # a spatial joint: its tree coordinates
                kinds = tuple(el.relative_names())
            else:
                exact.add(name)  # a planar joint's own name stands for its first coordinate
            exact.update(f"{k}_{identifier(name)}" for k in kinds or ())
        else:
            things.add(identifier(name))
    things.update(identifier(n) for n in net.graph.nodes if n not in net.bodies)
    return exact, things


def check_name(name, exact, things, part):
    """Whether ``name`` can be a coordinate or joint coordinate of the network (see :func:`accepted_names`)."""
    if part == "f0" and name.endswith("_dot"):
        name = name[:-4]
    if name in exact:
        return True
    m = _COORDINATE.match(name)
    return bool(m) and (m.group(2) in things or (m.group(3) is not None and f"{m.group(2)}_{m.group(3)}" in things))


def _value(v, where):
    if isinstance(v, (list, tuple)):
        if not 1 <= len(v) <= MAX_VALUES:
            raise InvalidValueError(f"{where}: a joint takes 1 to {MAX_VALUES} values, got {len(v)}")
        return [real(x, parameter=where) for x in v]
    if isinstance(v, (dict, set)) or v is None:
        raise InvalidValueError(f"{where}: {v!r:.60} is not a number")
    return real(v, parameter=where)


def checked(net, part, values, where="assembly"):
    """``values`` of one part (``"guess"``, ``"q0"``, ``"f0"``) as a plain dict, names checked against the
    network and values against :func:`netdyn.validate.real`; ``None`` stays ``None``. ``where`` starts the
    messages (``"assembly"``: ``"assembly q0: ..."``; ``"--q0"`` as it is)."""
    if values is None:
        return None
    label = where if where.lstrip("-") == part else f"{where} {part}"
    if part not in PARTS:
        raise ModelError(f"{where}: unknown part {part!r}; an assembly has {', '.join(PARTS)}")
    if not hasattr(values, "items"):
        raise ModelError(f"{label}: expected a mapping of coordinate names to values, got {values!r:.80}")
    if len(values) > MAX_NAMES:
        raise ModelError(f"{label}: {len(values)} names is more than {MAX_NAMES}")
    exact, things = accepted_names(net)
    out, bad = {}, []
    for k, v in values.items():
        key = k if isinstance(k, str) else getattr(getattr(k, "func", None), "__name__", None)
        if not isinstance(key, str) or not check_name(key, exact, things, part):
            bad.append(key if isinstance(key, str) else repr(k))
            continue
        out[key] = _value(v, f"{label}[{key!r}]")
    if bad:
        bodies = ", ".join(sorted(net.bodies)) or "none"
        joints = ", ".join(sorted(n for n, el in net.elements.items() if getattr(el, "is_joint", False))) or "none"
        shown = ", ".join(repr(b[:60]) for b in bad[:5]) + (" ..." if len(bad) > 5 else "")
        raise ModelError(f"{label}: {shown} {'is' if len(bad) == 1 else 'are'} not a coordinate or joint "
                         f"coordinate of {net.name!r} (bodies: {bodies}; joints: {joints}); body coordinates are "
                         "x_<body>, y_<body>, theta_<body> (spatial: x_, y_, z_, e0_..e3_), joint coordinates "
                         "<joint>, theta_<joint>, s_<joint>")
    return out


def checked_assembly(net, assembly, where="assembly"):
    """``assembly`` (an :class:`Assembly`) with every part checked against ``net``."""
    if not isinstance(assembly, Assembly):
        raise ModelError(f"{where}: expected an Assembly, got {type(assembly).__name__}")
    return Assembly(**{part: checked(net, part, getattr(assembly, part), where) for part in PARTS})


# ------------------------------------------------------------------------------------------ filling

def network_of(system):
    """The network a system is or was assembled from (``None`` for a hand-typed model or a bond graph)."""
    if getattr(system, "assembly", None) is not None and hasattr(system, "bodies"):
        return system
    meta = getattr(system, "metadata", None)
    net = meta.get("network") if isinstance(meta, dict) else None
    return net if getattr(net, "assembly", None) is not None else None


class StoredGuess(dict):
    """A guess taken from a network's assembly (:func:`fill`). It may name coordinates of every formulation
    (a spatial linkage's body coordinates for the absolute one, its joint coordinates for the relative one):
    the position solve skips the names the model in use does not have, where a caller's guess with such a
    name is an error."""

    skip_unknown = True


def fill(system, q0=None, f0=None, guess=None):
    """``(q0, f0, guess)``: each as the caller gave it, else the stored one of the system's network (the
    guess as a :class:`StoredGuess`, whose names may serve several formulations). Nothing is filled for a
    system that is not (or was not assembled from) a network.

    >>> from netdyn.linkages import four_bar
    >>> q0, f0, guess = fill(four_bar().model(), None, None, None)
    >>> q0, f0, round(guess["theta_rocker"], 4), type(guess).__name__
    (None, None, 1.1349, 'StoredGuess')
    """
    net = network_of(system)
    stored = getattr(net, "assembly", None)
    if not stored:
        return q0, f0, guess
    out = []
    for part, given in (("q0", q0), ("f0", f0), ("guess", guess)):
        value = given if given is not None else getattr(stored, part)
        if given is None and value is not None:
            value = StoredGuess(value) if part == "guess" else dict(value)
        out.append(value)
    return tuple(out)


__all__ = ["Assembly", "StoredGuess", "PARTS", "accepted_names", "check_name", "checked", "checked_assembly", "fill", "network_of"]
