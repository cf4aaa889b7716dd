"""uml2perf on network topologies against SimGrid, the same programs on the same platforms.

Usage (uml2perf's venv active; SimGrid's Python bindings importable by this interpreter or by
the system ``python3``, Debian ``apt-get install python3-simgrid``; optional)::

    python benchmarks/topology_peer.py            # the comparison table, as JSON lines
    python benchmarks/topology_peer.py --quick    # small cases only

Each case writes a machine file with ``[network.topology]`` (one core per node, so one process
per host as in SimGrid's cluster zones), runs ``uml2perf run MODEL --json`` and
``benchmarks/simgrid_peer.py SCENARIO --topology KIND:PARAMETERS`` (SimGrid's CM02 model, unit
latency and bandwidth factors, TCP-gamma off), and prints the two predicted times, their
relative difference, and the CPU seconds of each whole process.  Cases without a peer (the
32,768-process LAPW0) print uml2perf's figures alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import REPO, RING_WORK, simgrid_python, uml2perf_command  # noqa: E402
from synthetic import allreduce_model, ring_model, write_model  # noqa: E402

#: Every link of the topologies: 1 us, 10 Gbit/s.
LINK = (1e-6, 1.25e9)

#: (name, scenario, processes, topology, scenario arguments, peer or not)
CASES: list[tuple[str, str, int, str, dict[str, Any], bool]] = [
    (
        "all-reduce loop on a fat tree",
        "allreduce",
        16,
        "fat_tree:2;4,4;1,2;1,1",
        {"rounds": 50, "size": 8},
        True,
    ),
    (
        "all-to-all of 1 MB on a fat tree, two top switches",
        "alltoall",
        16,
        "fat_tree:2;4,4;1,2;1,1",
        {"rounds": 5, "size": 1_000_000},
        True,
    ),
    (
        # (SimGrid 3.32's Python bindings crash on an all-to-all over a dragonfly zone)
        "all-to-all of 1 MB on a torus",
        "alltoall",
        16,
        "torus:4,4",
        {"rounds": 5, "size": 1_000_000},
        True,
    ),
    ("ring of 1 MB on a torus", "ring", 16, "torus:4,4", {"rounds": 100, "size": 1_000_000}, True),
    (
        "ring of 1 MB on a fat tree, one top switch",
        "ring",
        16,
        "fat_tree:2;4,4;1,1;1,1",
        {"rounds": 100, "size": 1_000_000},
        True,
    ),
    ("LAPW0 on a dragonfly", "lapw0", 16, "dragonfly:2,1;2,1;2,1;2", {}, True),
    ("LAPW0 on a fat tree", "lapw0", 512, "fat_tree:2;32,16;1,16;1,1", {}, True),
    ("LAPW0 on a fat tree", "lapw0", 32768, "fat_tree:3;32,32,32;1,32,32;1,1,1", {}, False),
]


def machine_text(procs: int, topology: str, eager_limit: int = 65536) -> str:
    kind, _, parameters = topology.partition(":")
    return "\n".join(
        [
            f'name = "{kind} peer"',
            f"nodes = {procs}",
            "cores_per_node = 1",
            "[network]",
            f"eager_limit = {eager_limit}",
            "[network.intra_node]",
            "latency = 1e-6",
            "bandwidth = 1e10",
            "[network.topology]",
            f'kind = "{kind}"',
            f'parameters = "{parameters}"',
            f"link = {{ latency = {LINK[0]!r}, bandwidth = {LINK[1]!r} }}",
            "[collectives]",
            'allreduce = "recursive_doubling"',
            'alltoall = "pairwise"',
            "",
        ]
    )


def timed(command: list[str]) -> tuple[dict[str, Any], float, float]:
    """Run ``command``; its JSON output, wall seconds and CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    text = done.stdout
    return json.loads(text[text.index("{") : text.rindex("}") + 1]), wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the cases of 16 processes")
    args = parser.parse_args(argv)
    peer = simgrid_python()
    with tempfile.TemporaryDirectory(prefix="topology-peer-") as tmp:
        work = Path(tmp)
        for name, scenario, procs, topology, extra, with_peer in CASES:
            if args.quick and procs > 16:
                continue
            if scenario == "ring":
                model = write_model(
                    work / "ring.uml", ring_model(extra["rounds"], work=RING_WORK, size=extra["size"])
                )
            elif scenario in ("allreduce", "alltoall"):
                text = allreduce_model(extra["rounds"], work=RING_WORK, size=extra["size"])
                if scenario == "alltoall":  # the same loop with an all-to-all in place of the all-reduce
                    text = text.replace("AllreducePlus", "AlltoallPlus")
                model = write_model(work / f"{scenario}.uml", text)
            else:
                model = REPO / "samples" / "lapw0.uml"
            machine = work / "machine.toml"
            # the peer's ring sends eagerly (its receiver is set in advance), whatever the size
            eager = 1 << 22 if scenario == "ring" else 65536
            machine.write_text(machine_text(procs, topology, eager), encoding="utf-8")
            ours, ours_wall, ours_cpu = timed(
                [
                    *uml2perf_command(),
                    "run",
                    str(model),
                    "--machine",
                    str(machine),
                    "--procs",
                    str(procs),
                    "--json",
                ]
            )
            row: dict[str, Any] = {
                "case": name,
                "procs": procs,
                "topology": topology,
                "uml2perf_time": ours["time"],
                "uml2perf_cpu": round(ours_cpu, 3),
                "uml2perf_wall": round(ours_wall, 3),
            }
            if with_peer and peer is not None:
                command = [peer, str(HERE / "simgrid_peer.py"), scenario, "--procs", str(procs), "--ppn", "1"]
                command += ["--topology", topology, "--link", repr(LINK[0]), repr(LINK[1])]
                if scenario != "lapw0":
                    command += [
                        "--rounds",
                        str(extra["rounds"]),
                        "--size",
                        str(extra["size"]),
                        "--work",
                        repr(RING_WORK),
                    ]
                theirs, theirs_wall, theirs_cpu = timed(command)
                row |= {
                    "simgrid_time": theirs["time"],
                    "relative_difference": abs(ours["time"] - theirs["time"]) / theirs["time"],
                    "simgrid_cpu": round(theirs_cpu, 3),
                    "simgrid_wall": round(theirs_wall, 3),
                    "cpu_ratio_simgrid_over_uml2perf": round(theirs_cpu / ours_cpu, 2) if ours_cpu else None,
                }
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
