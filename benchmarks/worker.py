"""Subprocess entry of one benchmark case: ``python -m benchmarks.worker module:function '{json kwargs}'``.

Prints ``BENCH_RESULT {"status": ..., "values": ...}`` as its last line (see :mod:`benchmarks.harness`).
"""
import importlib
import json
import sys
import traceback

from benchmarks.harness import MARK, READY, NotAvailable, _plain, preload


def main(argv):
    target, kwargs = argv[1], json.loads(argv[2]) if len(argv) > 2 else {}
    module, func = target.split(":")
    try:
        fn = getattr(importlib.import_module(module), func)
        preload(getattr(fn, "preload", ()))  # the libraries the case uses (see harness.needs)
    finally:
        print(READY, flush=True)  # the time cap starts now
    try:
        values = fn(**kwargs)
        msg = {"status": "ok", "values": _plain(values or {})}
    except NotAvailable as exc:
        msg = {"status": "na", "message": str(exc)}
    except Exception as exc:  # shown in the table, not raised: one broken case must not end the run
        traceback.print_exc()
        msg = {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:300]}
    print(MARK + json.dumps(msg), flush=True)


if __name__ == "__main__":
    main(sys.argv)
