"""Run one command and report its own wall time, CPU time and peak memory as JSON.

Usage: ``python -I -S benchmarks/peakmem.py REPORT.json COMMAND [ARGS...]``

Why a separate small process: Linux keeps a process's peak resident memory
(``ru_maxrss``) across ``exec``, and a child started by a big parent (with
``fork`` or ``vfork``) begins with the parent's memory as its peak: a
benchmark driver of 60 MiB would report 60 MiB for every child, however small.
This wrapper is a bare interpreter (``-I -S``: no site packages, about 7 MiB):
it forks, the fork execs the command at once, and ``os.wait4`` returns the
command's own resource usage.  Its peak can read high by at most the wrapper's
own few MiB, below the peak of any Python program it measures.

The wall time runs from just before the fork to the moment the command is
reaped, so the wrapper's own start-up is not counted.  The report is one JSON
object: ``wall``, ``user``, ``system`` (seconds), ``max_rss_kib`` and
``returncode``.  The command's standard streams are the wrapper's.
"""

import json
import os
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    report, command = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the command, in a fresh process of the wrapper's small size
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    data = {
        "wall": wall,
        "user": usage.ru_utime,
        "system": usage.ru_stime,
        "max_rss_kib": usage.ru_maxrss,  # KiB on Linux
        "returncode": code,
    }
    with open(report, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
