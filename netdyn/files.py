"""Paths users give: a ``str`` or any ``os.PathLike``, and errors of the :class:`~netdyn.errors.NetdynError`
family instead of ``OSError``.

Every netdyn function that writes a file (``save_model``, ``save_bond_graph``, ``save_fmu``, the C export's
``write``, pictures and animations) makes the folder it writes into when it is missing, as ``mkdir -p`` does,
and a path that cannot be written (a file where a folder should be, no permission) is an
:class:`~netdyn.errors.ExportError` naming the path and why. Readers (``read_netlist``, ``load_model``,
``load_bond_graph``) answer a missing or unreadable file with a :class:`~netdyn.errors.ParseError`.

>>> import os, tempfile
>>> base = tempfile.mkdtemp()
>>> path = write_text(os.path.join(base, "new", "folder", "x.txt"), "hello", "a note")
>>> open(path).read()
'hello'
>>> output_path(os.path.join(path, "below a file"), "a model file")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
netdyn.errors.ExportError: a model file '...': cannot make its folder (...); give a path in a folder you can write
"""
from __future__ import annotations

import os
import pathlib
from contextlib import contextmanager

from netdyn.errors import ExportError


def as_path(path, what):
    """``path`` as a :class:`pathlib.Path`; anything but a ``str`` or ``os.PathLike`` is an ``ExportError``."""
    try:
        return pathlib.Path(os.fspath(path))
    except TypeError:
        raise ExportError(f"{what}: a path is a str or an os.PathLike, not {type(path).__name__}") from None


def output_folder(path, what):
    """The folder ``path`` (``str`` or ``PathLike``), made with its parents when missing."""
    folder = as_path(path, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{what} {str(folder)!r}: cannot make the folder ({exc.strerror or exc}); give a path in "
                          "a folder you can write") from None
    return folder


def output_path(path, what):
    """The file ``path`` (``str`` or ``PathLike``) with its folder made when missing."""
    file = as_path(path, what)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{what} {str(file)!r}: cannot make its folder ({exc.strerror or exc}); give a path in "
                          "a folder you can write") from None
    return file


@contextmanager
def writing(path, what):
    """``with writing(path, what) as target:`` — ``target`` is the path as a ``str`` (its folder made) or, for
    an open file object, the object itself; an ``OSError`` inside (a picture's ``savefig``) is an
    ``ExportError``."""
    target = path if hasattr(path, "write") else str(output_path(path, what))
    try:
        yield target
    except OSError as exc:
        raise ExportError(f"{what} {str(target)!r}: cannot write it ({exc.strerror or exc})") from None


def write_text(path, text, what):
    """Write ``text`` to the file ``path`` (its folder made when missing); returns the path."""
    file = output_path(path, what)
    try:
        file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"{what} {str(file)!r}: cannot write it ({exc.strerror or exc})") from None
    return file


__all__ = ["as_path", "output_folder", "output_path", "writing", "write_text"]
