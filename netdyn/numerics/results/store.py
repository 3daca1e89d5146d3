"""Where a solution's rows live: in memory, a chosen few of them, or streamed to an HDF5 file.

A solution reads its blocks (``q``, ``f``, ``acc``, ``mu``) one row at a time (``X[row]``: a coordinate, a
port's combination of coordinates). A :class:`Block` answers those reads from wherever the rows are kept:

* a dense array (the default for outputs up to :func:`output_limit` bytes);
* the rows a ``save=`` list needs and no others (SPICE's ``.save``): a row not kept is an
  :class:`~netdyn.errors.UnsavedError` naming ``save=``;
* an HDF5 dataset (h5py), read lazily a row at a time, for outputs above the limit: the integrator hands
  its columns to a :class:`ColumnWriter` that buffers a few megabytes and writes them out, so memory
  stays at the buffer whatever the number of output times.

The rule for ``simulate(..., save=None)``: every quantity is kept; when the state rows times the output
times exceed :func:`output_limit` (``NETDYN_OUTPUT_LIMIT`` bytes, default 256 MB), they stream to an HDF5
file (``output=`` names it; else a temporary file removed with the solution) and an
:class:`~netdyn.errors.OutputWarning` says so.

>>> import numpy as np
>>> b = Block(np.arange(6.0).reshape(2, 3), rows=[4, 7], n=10, what="q")
>>> b[7].tolist(), b.shape
([3.0, 4.0, 5.0], (10, 3))
>>> b[0]
Traceback (most recent call last):
...
netdyn.errors.UnsavedError: row 0 of q was not saved: add the quantity to save= (or the netlist's .save card) to keep it
"""
from __future__ import annotations

import os
import tempfile
import weakref

import numpy as np

from netdyn.errors import NetdynError, UnsavedError

#: outputs above this many bytes stream to disk unless ``NETDYN_OUTPUT_LIMIT`` says otherwise
OUTPUT_LIMIT = 256e6
#: bytes of output columns buffered in memory before they are written to the file
BUFFER_BYTES = 32e6


def output_limit():
    """The size in bytes above which a solution's rows stream to an HDF5 file (``NETDYN_OUTPUT_LIMIT``).

    >>> output_limit() > 0
    True
    """
    text = os.environ.get("NETDYN_OUTPUT_LIMIT", "").strip()
    if not text:
        return OUTPUT_LIMIT
    try:
        value = float(text)
    except ValueError:
        raise NetdynError(f"NETDYN_OUTPUT_LIMIT must be a number of bytes, got {text!r}") from None
    return value


def require_h5py():
    """h5py, or a :class:`~netdyn.errors.NetdynError` saying how to install it."""
    try:
        import h5py
    except ImportError:  # pragma: no cover - h5py is a test dependency
        raise NetdynError("streaming outputs to disk needs h5py: pip install netdyn[hdf5] (or pass save=[...] "
                          "to keep fewer quantities in memory)") from None
    return h5py


class Block:
    """Rows of one block (``(n, K)``) read one at a time: ``data`` holds the kept rows (an array or an
    h5py dataset), ``rows`` their indices (``None``: every row, in order)."""

    def __init__(self, data, rows=None, n=None, what="q"):
        self.data, self.what = data, what
        self.rows = None if rows is None else {int(r): j for j, r in enumerate(rows)}
        K = data.shape[1] if len(data.shape) == 2 else 0
        self.shape = (data.shape[0] if n is None else n, K)

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            i = int(i)
            if i < 0:
                i += self.shape[0]
            j = i if self.rows is None else self.rows.get(i)
            if j is None or not 0 <= j < self.data.shape[0]:
                raise UnsavedError(f"row {i} of {self.what} was not saved: add the quantity to save= (or the "
                                   "netlist's .save card) to keep it")
            return np.asarray(self.data[j], dtype=float)
        return np.asarray(self)[i]

    def __array__(self, dtype=None, copy=None):
        if self.rows is not None and len(self.rows) < self.shape[0]:
            raise UnsavedError(f"only {len(self.rows)} of the {self.shape[0]} rows of {self.what} were saved; "
                               "read the saved quantities by name, or add what you need to save=")
        out = np.asarray(self.data[...], dtype=float)  # (an HDF5 dataset is read whole here)
        return out if dtype is None else out.astype(dtype)

    def __len__(self):
        return self.shape[0]

    @property
    def ndim(self):
        return 2

    def __iter__(self):
        return (self[i] for i in range(self.shape[0]))


class Unsaved:
    """A block no saved quantity needed: any read is an :class:`~netdyn.errors.UnsavedError`."""

    def __init__(self, shape, what, saved):
        self.shape, self.what, self.saved = shape, what, tuple(saved)
        self.ndim = 2

    def _refuse(self):
        raise UnsavedError(f"{self.what} was not saved (save={list(self.saved)}); read those quantities by "
                           f"name (sol.series, sol.voltage, sol.current), or add what you need to save=")

    def __getitem__(self, i):
        self._refuse()

    def __array__(self, dtype=None, copy=None):
        self._refuse()

    def __len__(self):
        return self.shape[0]


class ColumnWriter:
    """Output columns of a few blocks, kept for some rows, into memory or an HDF5 file, a chunk at a time.

    ``layout`` is ``{block: (n, rows)}`` (``rows`` ``None``: all ``n`` rows); :meth:`write` takes a chunk of
    columns ``{block: (n, c) array}`` and keeps its rows; :meth:`blocks` gives the :class:`Block` of each.
    ``path`` ``None`` keeps the rows in memory; otherwise they go to that HDF5 file (datasets named by
    block, chunked by rows and columns so that reading one row touches a few chunks).

    >>> w = ColumnWriter({"q": (3, [2])}, K=4)
    >>> w.write({"q": np.arange(6.0).reshape(3, 2)}); w.write({"q": np.arange(6.0).reshape(3, 2) + 10})
    >>> w.blocks()["q"][2].tolist()
    [4.0, 5.0, 14.0, 15.0]
    """

    def __init__(self, layout, K, path=None, names=None, columns=None):
        self.layout, self.K, self.path = dict(layout), int(K), path
        self.columns = int(columns or min(self.K, 256)) or 1  # columns a write brings: one chunk wide
        self.k = 0
        self.file = None
        self.data = {}
        if path is not None:
            h5py = require_h5py()
            self.file = h5py.File(path, "w")
            self.file.attrs["format"] = "netdyn solution"
            self.file.attrs["layout"] = "one row per quantity, one column per output time"
            for name, values in (names or {}).items():
                self.file.create_dataset(name, data=np.array([str(v) for v in values], dtype=object),
                                         dtype=h5py.string_dtype())
        for block, (n, rows) in self.layout.items():
            m = n if rows is None else len(rows)
            if self.file is None:
                self.data[block] = np.empty((m, self.K))
            else:
                cols = max(1, min(self.K, self.columns))  # whole chunks written at once, ~1 MB each
                chunk = (max(1, min(m, 2 ** 17 // cols)), cols)
                self.data[block] = self.file.create_dataset(block, shape=(m, self.K), dtype="f8",
                                                            chunks=chunk if m else None)
                if rows is not None:
                    self.file.create_dataset(f"{block}_rows", data=np.asarray(rows, dtype=np.int64))

    def write(self, chunk):
        c = None
        for block, (n, rows) in self.layout.items():
            X = chunk[block]
            c = X.shape[1]
            if c:
                self.data[block][:, self.k:self.k + c] = X if rows is None else X[np.asarray(rows, dtype=np.int64)]
        self.k += c or 0

    def put(self, name, values):
        """A whole small series (``t``, the work integrals) beside the blocks."""
        if self.file is not None:
            self.file.create_dataset(name, data=np.asarray(values, dtype=float))

    def blocks(self):
        """The :class:`Block` of every block, over the columns written; the file (if any) stays open for reads."""
        out = {}
        for block, (n, rows) in self.layout.items():
            data = self.data[block]
            if self.k < self.K:  # (a Ctrl-C: the columns reached)
                data = data[:, :self.k] if self.file is None else _Columns(data, self.k)
            out[block] = Block(data, rows, n, block)
        if self.file is not None:
            self.file.flush()
        return out


class _Columns:
    """The first ``k`` columns of an HDF5 dataset (a run stopped early), read a row at a time."""

    def __init__(self, data, k):
        self.data, self.k = data, k
        self.shape = (data.shape[0], k)

    def __getitem__(self, i):
        return self.data[i, :self.k] if i is not Ellipsis else self.data[:, :self.k]


def temporary_path(owner):
    """A fresh HDF5 file name in ``NETDYN_OUTPUT_DIR`` (else the system's temporary folder), removed when
    ``owner`` is garbage-collected."""
    folder = os.environ.get("NETDYN_OUTPUT_DIR") or None
    fd, path = tempfile.mkstemp(prefix="netdyn-", suffix=".h5", dir=folder)
    os.close(fd)
    weakref.finalize(owner, _remove, path)
    return path


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def plan_storage(bytes_needed, output=None, owner=None):
    """``(path or None, streamed)``: where rows of ``bytes_needed`` bytes go by the rule of this module."""
    if output is not None:
        return os.fspath(output), True
    if bytes_needed <= output_limit():
        return None, False
    return temporary_path(owner), True


class Storage:
    """How a numeric path keeps its output rows: ``layout`` ``{block: (n, rows or None)}`` (a block left out is
    not kept), ``path`` the HDF5 file (``None``: memory), ``saved`` the names asked for (for messages),
    ``names`` the name lists written beside the data in the file."""

    def __init__(self, layout, path=None, saved=(), names=None):
        self.layout, self.path, self.saved, self.names = dict(layout), path, tuple(saved), names or {}
        self.written = None

    def writer(self, K, columns=None):
        """The :class:`ColumnWriter` of ``K`` output times, written ``columns`` at a time."""
        self.written = ColumnWriter(self.layout, K, self.path, self.names, columns)
        return self.written

    def columns(self, rows_per_column, K):
        """How many output columns of ``rows_per_column`` values to buffer before writing."""
        return int(max(1, min(K, BUFFER_BYTES // max(1, 8 * rows_per_column))))

    def bytes_per_time(self):
        """Bytes a column of every kept row takes."""
        return 8 * sum(n if rows is None else len(rows) for n, rows in self.layout.values())
