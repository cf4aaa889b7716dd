"""The benchmark scenarios in SimGrid, a peer simulator, through its Python bindings.

Usage (with an interpreter that imports ``simgrid``; Debian: ``apt-get install
python3-simgrid`` for the system ``python3``)::

    python3 benchmarks/simgrid_peer.py routes --procs 16 --topology "dragonfly:2,1;2,1;2,1;2"

    python3 benchmarks/simgrid_peer.py ring --procs 64 --rounds 2000
    python3 benchmarks/simgrid_peer.py allreduce --procs 64 --rounds 200
    python3 benchmarks/simgrid_peer.py lapw0 --procs 128

Each prints one JSON object: the predicted time and the seconds spent in
SimGrid's ``Engine.run``.

The scenarios are those uml2perf runs in ``benchmarks/run.py``:

``ring``
    as ``synthetic.ring_model``: compute ``work`` seconds, send ``size`` bytes
    to ``pid + 1`` eagerly, receive from ``pid - 1``, ``rounds`` times;
``allreduce``
    as ``synthetic.allreduce_model``: compute ``work`` seconds, then an
    all-reduce of ``size`` bytes by recursive doubling (the algorithm uml2perf
    chooses for messages up to 2 KiB; a power-of-two process count);
``alltoall``
    compute ``work`` seconds, then a pairwise all-to-all of ``size`` bytes per pair, ``rounds``
    times (the rounds synchronous, as uml2perf's collective schedules are);
``lapw0``
    as ``samples/lapw0.uml`` with its default ``NAT = 32``: the cost functions of
    that sample, an all-reduce of ``8 * NAT`` bytes (after its 1 ms cost) and the
    output chain of 1 MiB messages, which exceed the eager limit and so wait
    for the receiver (SimGrid's own rendezvous semantics).

The platform is the uml2perf benchmark machine: ``procs / ppn`` nodes of
``ppn`` one-core hosts at 1 flop/s (so ``execute(t)`` takes ``t`` seconds).
Inside a node a message costs the intra-node latency plus size / bandwidth;
between nodes the inter-node ones.  To make SimGrid's network model compute
exactly that, the network model is CM02 with latency and bandwidth factors of
1 (SimGrid's default LV08 model multiplies latency by 13.01 and bandwidth by
0.97), cross-traffic off, and timing precision 1e-12.  Each node is a SimGrid
cluster whose split-duplex private links (one up, one down per host) carry
half the intra-node latency each; the nodes are joined by one fat-pipe link per
node and direction (no bandwidth sharing: uml2perf does not model contention
on these links) carrying half of the remaining inter-node latency.  Each host
sends and receives at most one message at a time in these scenarios, so no
link is shared and SimGrid's CM02 gives latency + size / bandwidth per message,
uml2perf's formula.  (SimGrid charges no latency for a message of 0 bytes; the
scenarios send none.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from typing import Any

#: Default machine: the benchmark cluster of ``benchmarks/run.py``.
INTRA = (1e-6, 1e10)
INTER = (5e-5, 1.25e7)

#: LAPW0 sample parameters (``samples/lapw0.uml``).
LAPW0_NAT = 32
LAPW0_BUF = 1_048_576


def platform_xml(procs: int, ppn: int, intra: tuple[float, float], inter: tuple[float, float]) -> str:
    """A SimGrid platform of ``procs`` hosts ``h0..`` in nodes of ``ppn``, two link classes."""
    nodes = -(-procs // ppn)
    half_intra = intra[0] / 2
    half_rest = (inter[0] - intra[0]) / 2
    if half_rest < 0:
        raise ValueError("the inter-node latency must not be below the intra-node one")
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        '<zone id="machine" routing="Full">',
    ]
    for n in range(nodes):
        first, last = n * ppn, min(procs, (n + 1) * ppn) - 1
        lines.append(
            f'  <cluster id="node{n}" prefix="h" suffix="" radical="{first}-{last}" speed="1f" '
            f'bw="{intra[1]!r}Bps" lat="{half_intra!r}s" sharing_policy="SPLITDUPLEX" router_id="r{n}"/>'
        )
    for n in range(nodes):
        for way in ("up", "down"):
            lines.append(
                f'  <link id="{way}{n}" bandwidth="{inter[1]!r}Bps" latency="{half_rest!r}s" '
                'sharing_policy="FATPIPE"/>'
            )
    for a in range(nodes):
        for b in range(nodes):
            if a != b:
                lines.append(
                    f'  <zoneRoute src="node{a}" dst="node{b}" gw_src="r{a}" gw_dst="r{b}" symmetrical="NO">'
                    f'<link_ctn id="up{a}"/><link_ctn id="down{b}"/></zoneRoute>'
                )
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


def topology_platform(simgrid, kind: str, parameters: str, link: tuple[float, float]) -> None:
    """One SimGrid cluster zone of ``kind`` (``fat_tree``, ``torus``, ``dragonfly``) with hosts
    ``h0..`` at 1 flop/s, split-duplex links of ``link = (latency, bandwidth)``: the platform a
    machine file's ``[network.topology]`` of the same kind and parameters describes."""

    def netpoint(zone, coords, ident):
        host = zone.create_host(f"h{ident}", 1.0)
        return (host.netpoint, None)

    callbacks = simgrid.ClusterCallbacks(netpoint, None, None)
    root = simgrid.NetZone.create_full_zone("root")
    sharing = simgrid.Link.SharingPolicy.SPLITDUPLEX
    parts = [[int(x) for x in part.split(",")] for part in parameters.split(";")]
    latency, bandwidth = link
    if kind == "fat_tree":
        params = simgrid.FatTreeParams(parts[0][0], parts[1], parts[2], parts[3])
        zone = simgrid.NetZone.create_fatTree_zone(
            "net", root, params, callbacks, bandwidth, latency, sharing
        )
    elif kind == "torus":
        zone = simgrid.NetZone.create_torus_zone(
            "net", root, parts[0], callbacks, bandwidth, latency, sharing
        )
    elif kind == "dragonfly":
        params = simgrid.DragonflyParams(tuple(parts[0]), tuple(parts[1]), tuple(parts[2]), parts[3][0])
        zone = simgrid.NetZone.create_dragonfly_zone(
            "net", root, params, callbacks, bandwidth, latency, sharing
        )
    else:
        raise SystemExit(f"unknown topology {kind!r}")
    zone.seal()
    root.seal()


def engine(
    procs: int,
    ppn: int,
    intra: tuple[float, float],
    inter: tuple[float, float],
    topology: str | None = None,
    link: tuple[float, float] | None = None,
):
    """A SimGrid engine on the benchmark platform with the matched network model."""
    import simgrid

    e = simgrid.Engine(
        [
            sys.argv[0],
            "--cfg=network/model:CM02",
            "--cfg=network/latency-factor:1",
            "--cfg=network/bandwidth-factor:1",
            "--cfg=network/crosstraffic:0",
            "--cfg=network/TCP-gamma:0",
            "--cfg=surf/precision:1e-12",
            "--cfg=maxmin/precision:1e-12",
            "--log=root.thresh:warning",
        ]
    )
    if topology is not None:
        kind, _, parameters = topology.partition(":")
        topology_platform(simgrid, kind, parameters, link or inter)
        return e
    handle, path = tempfile.mkstemp(suffix=".xml", prefix="simgrid-platform-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(platform_xml(procs, ppn, intra, inter))
        e.load_platform(path)
    finally:
        os.unlink(path)
    return e


def _inbox(simgrid, src: int, dst: int):
    return simgrid.Mailbox.by_name(f"{src}>{dst}")


def ring(simgrid, pid: int, procs: int, rounds: int, work: float, size: int) -> None:
    right, left = (pid + 1) % procs, (pid - 1) % procs
    out_box, in_box = _inbox(simgrid, pid, right), _inbox(simgrid, left, pid)
    in_box.set_receiver(simgrid.Actor.self())  # eager: a send starts its transfer at once
    execute = simgrid.this_actor.execute
    for _ in range(rounds):
        execute(work)
        out_box.put_init(pid, size).detach()
        in_box.get()


def allreduce_rd(simgrid, pid: int, procs: int, size: int) -> None:
    """Recursive doubling: log2(procs) exchanges of ``size`` bytes with ``pid ^ mask``."""
    mask = 1
    while mask < procs:
        partner = pid ^ mask
        _inbox(simgrid, pid, partner).put_init(pid, size).detach()
        _inbox(simgrid, partner, pid).get()
        mask <<= 1


def _own_inboxes(simgrid, pid: int, procs: int) -> None:
    """Make this actor the eager receiver of every all-reduce partner's mailbox."""
    me = simgrid.Actor.self()
    mask = 1
    while mask < procs:
        _inbox(simgrid, pid ^ mask, pid).set_receiver(me)
        mask <<= 1


def allreduce_loop(simgrid, pid: int, procs: int, rounds: int, work: float, size: int) -> None:
    _own_inboxes(simgrid, pid, procs)
    execute = simgrid.this_actor.execute
    for _ in range(rounds):
        execute(work)
        allreduce_rd(simgrid, pid, procs, size)


def alltoall_loop(simgrid, pid: int, procs: int, rounds: int, work: float, size: int, barrier) -> None:
    """Compute, then a pairwise all-to-all: in round s send to ``pid + s``, receive from
    ``pid - s``; every process waits for the round to end (the synchronous rounds uml2perf's
    collective schedules have)."""
    execute = simgrid.this_actor.execute
    for _ in range(rounds):
        execute(work)
        for step in range(1, procs):
            out = _inbox(simgrid, pid, (pid + step) % procs).put_async(pid, size)
            _inbox(simgrid, (pid - step) % procs, pid).get()
            out.wait()
            barrier.wait()


def lapw0(simgrid, pid: int, procs: int, nat: int) -> None:
    """``samples/lapw0.uml``: the cost functions of the sample, in the order of its activity."""
    _own_inboxes(simgrid, pid, procs)
    execute = simgrid.this_actor.execute
    pnat = math.ceil(nat / procs)
    execute(0.5)  # MPIinit()
    execute(1.5 + 0.15 * nat)  # ReadInput(NAT)
    for _ in range(pnat):
        execute(27.0)  # CalcMPM()
    execute(0.001)  # AllReduceSmall(): the all-reduce's own cost
    allreduce_rd(simgrid, pid, procs, 8 * nat)
    execute(25.0 + 0.2 * nat)  # DoSFT(NAT)
    execute(2.0 + 0.1 * pnat)  # DefVTOT(PNAT)
    if pid > 0:
        _inbox(simgrid, pid - 1, pid).get()  # rendezvous: 1 MiB exceeds the eager limit
    execute(1.5 + 0.01 * pnat)  # o3(PNAT)
    if pid < procs - 1:
        execute(0.001 * 4)  # TimeBSend(4)
        _inbox(simgrid, pid, pid + 1).put(pid, LAPW0_BUF)
    execute(0.5)  # MPIterm()


def simulate(
    scenario: str,
    procs: int,
    rounds: int,
    work: float,
    size: int,
    ppn: int,
    intra: tuple[float, float],
    inter: tuple[float, float],
    topology: str | None = None,
    link: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """Run one scenario; return (predicted time, seconds in ``Engine.run``)."""
    import simgrid

    if scenario in ("allreduce", "lapw0") and procs & (procs - 1):
        raise SystemExit(f"{scenario}: recursive doubling here needs a power-of-two process count")
    e = engine(procs, ppn, intra, inter, topology, link)
    barrier = simgrid.Barrier(procs) if scenario == "alltoall" else None
    for pid in range(procs):
        host = simgrid.Host.by_name(f"h{pid}")
        if scenario == "ring":
            simgrid.Actor.create(f"p{pid}", host, ring, simgrid, pid, procs, rounds, work, size)
        elif scenario == "allreduce":
            simgrid.Actor.create(f"p{pid}", host, allreduce_loop, simgrid, pid, procs, rounds, work, size)
        elif scenario == "alltoall":
            simgrid.Actor.create(
                f"p{pid}", host, alltoall_loop, simgrid, pid, procs, rounds, work, size, barrier
            )
        else:
            simgrid.Actor.create(f"p{pid}", host, lapw0, simgrid, pid, procs, LAPW0_NAT)
    start = time.perf_counter()
    e.run()
    return simgrid.Engine.clock, time.perf_counter() - start


def routes(topology: str, hosts: int, link: tuple[float, float]) -> dict[str, list[Any]]:
    """SimGrid's route between every two hosts of a topology: ``"a,b" -> [latency, [link names]]``."""
    import simgrid

    simgrid.Engine([sys.argv[0], "--cfg=network/model:CM02", "--log=root.thresh:critical"])
    kind, _, parameters = topology.partition(":")
    topology_platform(simgrid, kind, parameters, link)
    found = [simgrid.Host.by_name(f"h{i}") for i in range(hosts)]
    out: dict[str, list[Any]] = {}
    for a, host in enumerate(found):
        for b, other in enumerate(found):
            if a != b:
                links, latency = host.route_to(other)
                out[f"{a},{b}"] = [latency, [lk.name for lk in links]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("scenario", choices=("ring", "allreduce", "alltoall", "lapw0", "routes"))
    parser.add_argument("--procs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--work", type=float, default=1e-3)
    parser.add_argument("--size", type=int, help="bytes per message (ring 1024, all-reduce 8)")
    parser.add_argument("--ppn", type=int, default=4, help="processes per node (block placement)")
    parser.add_argument("--intra", type=float, nargs=2, default=INTRA, metavar=("LATENCY", "BANDWIDTH"))
    parser.add_argument("--inter", type=float, nargs=2, default=INTER, metavar=("LATENCY", "BANDWIDTH"))
    parser.add_argument(
        "--topology",
        help="KIND:PARAMETERS, e.g. 'fat_tree:2;4,4;1,2;1,1': one host per process on that SimGrid "
        "cluster zone instead of the two-class nodes (--ppn is then 1)",
    )
    parser.add_argument(
        "--link", type=float, nargs=2, metavar=("LATENCY", "BANDWIDTH"), help="topology links"
    )
    args = parser.parse_args(argv)
    if args.scenario == "routes":  # for the tests: SimGrid's routes on --topology
        link = tuple(args.link) if args.link else (1e-6, 1e9)
        json.dump(routes(args.topology, args.procs, link), sys.stdout)  # type: ignore[arg-type]
        sys.stdout.write("\n")
        return 0
    size = args.size if args.size is not None else (1024 if args.scenario == "ring" else 8)
    now, loop = simulate(
        args.scenario,
        args.procs,
        args.rounds,
        args.work,
        size,
        args.ppn,
        tuple(args.intra),
        tuple(args.inter),
        args.topology,
        tuple(args.link) if args.link else None,
    )
    json.dump({"time": now, "loop": loop}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
