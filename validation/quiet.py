"""Is the machine quiet enough to measure on?  (The check of :mod:`uml2perf.quiet`.)

The suite pauses before every measured run and reads how busy the CPUs were meanwhile
(``/proc/stat``): what others do, not what the suite does.  The same check guards every
launch of ``uml2perf calibrate``.
"""

from __future__ import annotations

from uml2perf.quiet import Probe, probe

__all__ = ["Probe", "probe"]
