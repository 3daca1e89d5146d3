"""``python -m netdyn``: the ``netdyn`` command (:mod:`netdyn.cli`), for environments without the console script."""
import sys

from netdyn.cli import main

if __name__ == "__main__":
    sys.exit(main())
