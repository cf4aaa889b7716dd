"""How well counted tags price numpy kernels on a machine: measured time over priced time.

``python benchmarks/counting.py --machine FILE [--sizes 256,16384,...]``: the catalogue of
``uml2perf.counting`` (twenty-one numpy lines at four sizes), each one's measured time over the price
of the counts docs/profile.md gives it, for one process alone. Run it with the machine file
``uml2perf calibrate`` wrote on the same machine, when the machine is quiet.
"""

from __future__ import annotations

import sys

from uml2perf.counting import COUNTED_KERNELS, FRESH_BLOCK, SIZES, main

__all__ = ["COUNTED_KERNELS", "FRESH_BLOCK", "SIZES", "main"]

if __name__ == "__main__":
    sys.exit(main())
