"""Synthetic models written as Papyrus-style XMI files in the uml2perf profile.

The benchmark and the tests need models of a known shape and any size: a
straight chain of N actions (to measure conversion), a ring of processes that
compute and pass a message to their neighbour for R rounds (to measure the
simulator against plain SimPy), a loop of compute and all-reduce (to compare
with SimGrid), and a bulk-synchronous model with loops,
decisions and collectives (to compare the analytic fast path with the
simulation).  They are written exactly as Eclipse Papyrus (UML2 5.x) would
write them, with stereotype applications at the root of the file, so they
exercise the same reader path as a user's export.

Every id is derived from the element's position, so the same arguments always
produce the same bytes.

These are fixtures of the benchmarks and the tests, not part of the installed
package: ``python benchmarks/synthetic.py KIND OUT`` writes one (KIND: chain, ring,
ring_rendezvous, allreduce, threads, bsp), and the tests import this file through the path entry
in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

XMI_NS = "http://www.omg.org/spec/XMI/20131001"
UML_NS = "http://www.eclipse.org/uml2/5.0.0/UML"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
#: Namespace of the uml2perf profile as Papyrus writes it for an applied profile.
PROFILE_NS = "http://uml2perf.org/profile/1.0"
PROFILE_PREFIX = "uml2perf"

_PRIMITIVES = "pathmap://UML_LIBRARIES/UMLPrimitiveTypes.library.uml#"


def _attrs(pairs: Iterable[tuple[str, object]]) -> str:
    """Render ``name="value"`` pairs, quoting values safely and skipping ``None``."""
    return "".join(f" {name}={quoteattr(str(value))}" for name, value in pairs if value is not None)


@dataclass
class _Stereotype:
    """One root-level stereotype application (``<uml2perf:ActionPlus base_Action=... cost=.../>``)."""

    name: str
    base: str
    element: str
    tags: tuple[tuple[str, str], ...] = ()


@dataclass
class _Node:
    """An activity node waiting to be written; ``region`` is set for structured nodes."""

    id: str
    uml_type: str
    name: str
    region: Region | None = None


@dataclass
class Region:
    """The nodes and control flows of an activity or a structured node, in file order.

    Nodes are collected first and written at the end, so each node can carry
    its ``incoming``/``outgoing`` edge lists as Papyrus writes them.
    """

    prefix: str
    nodes: list[_Node] = field(default_factory=list)
    edges: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    last: str | None = None

    def node(self, node_id: str, uml_type: str, name: str, *, follow: bool = True) -> str:
        """Add a node; when ``follow`` is true it is linked after the previous node."""
        if follow and self.last is not None:
            self.flow(self.last, node_id)
        self.nodes.append(_Node(node_id, uml_type, name))
        self.last = node_id
        return node_id

    def structured(self, node_id: str, name: str) -> Region:
        """Add a StructuredActivityNode after the previous node and return its inner region.

        The region starts with its own InitialNode, so where its flow begins is explicit.
        """
        inner = Region(node_id)
        self.node(node_id, "StructuredActivityNode", name)
        self.nodes[-1].region = inner
        inner.node(f"{node_id}_init", "InitialNode", "start")
        return inner

    def flow(self, source: str, target: str, guard: str | None = None) -> None:
        self.edges.append((f"{self.prefix}_e{len(self.edges)}", source, target, guard))


@dataclass
class XmiBuilder:
    """Writes a Papyrus-style (Eclipse UML2 5.x) XMI document.

    Elements are emitted as text rather than through a DOM so a model of
    100,000 actions is written in well under a second; attribute values are
    quoted with :func:`xml.sax.saxutils.quoteattr`.
    """

    model_name: str
    lines: list[str] = field(default_factory=list)
    stereotypes: list[_Stereotype] = field(default_factory=list)

    def _line(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def apply(self, name: str, base: str, element: str, **tags: object) -> None:
        """Apply a profile stereotype (written at the root of the file, as Papyrus does)."""
        self.stereotypes.append(_Stereotype(name, base, element, tuple((k, str(v)) for k, v in tags.items())))

    def activity(
        self, xmi_id: str, name: str, region: Region, attributes: Sequence[tuple[str, str, object]]
    ) -> None:
        """Write an activity with typed attributes (its globals) and its region."""
        self._line(
            2,
            f"<packagedElement{_attrs([('xmi:type', 'uml:Activity'), ('xmi:id', xmi_id), ('name', name)])}>",
        )
        for attr_name, type_name, default in attributes:
            self._attribute(3, xmi_id, attr_name, type_name, default)
        self._region(3, region)
        self._line(2, "</packagedElement>")

    def _attribute(self, depth: int, owner: str, name: str, type_name: str, default: object) -> None:
        attr_id = f"{owner}.{name}"
        literal = {"Integer": "LiteralInteger", "Real": "LiteralReal", "Boolean": "LiteralBoolean"}[type_name]
        self._line(depth, f"<ownedAttribute{_attrs([('xmi:id', attr_id), ('name', name)])}>")
        self._line(
            depth + 1,
            f"<type{_attrs([('xmi:type', 'uml:PrimitiveType'), ('href', _PRIMITIVES + type_name)])}/>",
        )
        pairs = [("xmi:type", f"uml:{literal}"), ("xmi:id", f"{attr_id}.default"), ("value", default)]
        self._line(depth + 1, f"<defaultValue{_attrs(pairs)}/>")
        self._line(depth, "</ownedAttribute>")

    def _region(self, depth: int, region: Region) -> None:
        incoming: dict[str, list[str]] = {}
        outgoing: dict[str, list[str]] = {}
        for edge_id, source, target, _guard in region.edges:
            outgoing.setdefault(source, []).append(edge_id)
            incoming.setdefault(target, []).append(edge_id)
        for edge_id, source, target, guard in region.edges:
            edge_attrs = [
                ("xmi:type", "uml:ControlFlow"),
                ("xmi:id", edge_id),
                ("target", target),
                ("source", source),
            ]
            if guard is None:
                self._line(depth, f"<edge{_attrs(edge_attrs)}/>")
                continue
            self._line(depth, f"<edge{_attrs(edge_attrs)}>")
            self._line(
                depth + 1,
                f"<guard{_attrs([('xmi:type', 'uml:OpaqueExpression'), ('xmi:id', edge_id + '.guard')])}>",
            )
            self._line(depth + 2, "<language>OCL</language>")
            self._line(depth + 2, f"<body>{escape(guard)}</body>")
            self._line(depth + 1, "</guard>")
            self._line(depth, "</edge>")
        for node in region.nodes:
            pairs: list[tuple[str, object]] = [
                ("xmi:type", f"uml:{node.uml_type}"),
                ("xmi:id", node.id),
                ("name", node.name),
            ]
            if node.id in incoming:
                pairs.append(("incoming", " ".join(incoming[node.id])))
            if node.id in outgoing:
                pairs.append(("outgoing", " ".join(outgoing[node.id])))
            if node.region is None:
                self._line(depth, f"<node{_attrs(pairs)}/>")
            else:
                self._line(depth, f"<node{_attrs(pairs)}>")
                self._region(depth + 1, node.region)
                self._line(depth, "</node>")

    def document(self) -> str:
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<xmi:XMI xmi:version="20131001" xmlns:xmi="{XMI_NS}" xmlns:xsi="{XSI_NS}"'
            f' xmlns:uml="{UML_NS}" xmlns:{PROFILE_PREFIX}="{PROFILE_NS}">\n'
            f'  <uml:Model xmi:id="_model" name={quoteattr(self.model_name)}>\n'
        )
        tail = [
            '    <profileApplication xmi:id="_profile_application">',
            f'      <appliedProfile href="{PROFILE_NS}#_uml2perf_profile"/>',
            "    </profileApplication>",
            "  </uml:Model>",
        ]
        for index, st in enumerate(self.stereotypes):
            pairs = [("xmi:id", f"_st{index}"), (f"base_{st.base}", st.element), *st.tags]
            tail.append(f"  <{PROFILE_PREFIX}:{st.name}{_attrs(pairs)}/>")
        tail.append("</xmi:XMI>\n")
        return head + "\n".join(self.lines) + "\n" + "\n".join(tail)


def _action(b: XmiBuilder, region: Region, node_id: str, name: str, stereotype: str, **tags: object) -> None:
    """An OpaqueAction after the region's last node, with a stereotype and its tags."""
    region.node(node_id, "OpaqueAction", name)
    b.apply(stereotype, "Action", node_id, **tags)


# ------------------------------------------------------------------------------------------ models


def chain_model(actions: int, *, name: str = "chain") -> str:
    """A main activity of ``actions`` actions in a row, each with its own cost.

    Costs alternate between literals and expressions over a global ``W`` and
    ``pid`` so conversion parses expressions of both kinds, as real models do.
    """
    if actions < 1:
        raise ValueError("a chain needs at least one action")
    b = XmiBuilder(name)
    main = Region("_main")
    main.node("_init", "InitialNode", "start")
    for i in range(actions):
        cost = f"{i % 10 + 1}e-6 * W" if i % 2 else f"{i % 7 + 1}e-6 + pid * 1e-9"
        _action(b, main, f"_a{i}", f"A{i}", "ActionPlus", cost=cost)
    main.node("_final", "ActivityFinalNode", "end")
    b.activity("_main", "main", main, [("W", "Real", 1.0)])
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


def ring_model(
    rounds: int = 2000, *, work: float = 1e-3, size: int = 1024, name: str = "ring", local: float = 0.0
) -> str:
    """A ring: each process computes ``WORK`` seconds, sends ``SIZE`` bytes to ``pid+1`` and
    receives from ``pid-1``, ``R`` times in a ``loop+`` structured node.

    ``R``, ``WORK`` and ``SIZE`` are globals of the main activity, so ``--set``
    and sweeps can change them without regenerating the file.  Every process
    sends before it receives, so ``SIZE`` must stay within the machine's eager
    limit (64 KiB by default): larger messages use the rendezvous protocol and
    the ring deadlocks, as it would in MPI.  ``local`` > 0 gives the send and the receive a
    local cost (``cost`` tag, ``LOCAL`` seconds of CPU before the message goes or is taken).
    """
    b = XmiBuilder(name)
    main = Region("_main")
    main.node("_init", "InitialNode", "start")
    body = main.structured("_rounds", "rounds")
    b.apply("LoopPlus", "StructuredActivityNode", "_rounds", iterations="R")
    _action(b, body, "_compute", "compute", "ActionPlus", cost="WORK")
    costs = {"cost": "LOCAL"} if local else {}
    _action(
        b, body, "_send", "send_right", "SendPlus", dest="(pid + 1) % nprocs", size="SIZE", tag="0", **costs
    )
    _action(
        b,
        body,
        "_recv",
        "recv_left",
        "RecvPlus",
        source="(pid - 1 + nprocs) % nprocs",
        size="SIZE",
        tag="0",
        **costs,
    )
    main.node("_final", "ActivityFinalNode", "end")
    globals_ = [("R", "Integer", int(rounds)), ("WORK", "Real", float(work)), ("SIZE", "Integer", int(size))]
    if local:
        globals_.append(("LOCAL", "Real", float(local)))
    b.activity("_main", "main", main, globals_)
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


def rendezvous_ring_model(
    rounds: int = 2000, *, work: float = 1e-3, size: int = 131072, name: str = "ring_rendezvous"
) -> str:
    """The ring of :func:`ring_model` with messages for the rendezvous protocol (above the eager
    limit): even ranks send before they receive, odd ranks receive first, so no send waits forever.

    A decision on ``pid % 2`` inside the loop chooses the order, as an MPI program would.
    """
    b = XmiBuilder(name)
    main = Region("_main")
    main.node("_init", "InitialNode", "start")
    body = main.structured("_rounds", "rounds")
    b.apply("LoopPlus", "StructuredActivityNode", "_rounds", iterations="R")
    _action(b, body, "_compute", "compute", "ActionPlus", cost="WORK")
    body.node("_order", "DecisionNode", "even?")
    right = {"dest": "(pid + 1) % nprocs", "size": "SIZE", "tag": "0"}
    left = {"source": "(pid - 1 + nprocs) % nprocs", "size": "SIZE", "tag": "0"}
    for parity, guard in (("even", "pid % 2 = 0"), ("odd", "else")):
        first, second = ("send", "recv") if parity == "even" else ("recv", "send")
        previous = "_order"
        for step in (first, second):
            node_id = f"_{step}_{parity}"
            body.node(node_id, "OpaqueAction", f"{step}_{parity}", follow=False)
            body.flow(previous, node_id, guard=guard if previous == "_order" else None)
            stereotype, tags = ("SendPlus", right) if step == "send" else ("RecvPlus", left)
            b.apply(stereotype, "Action", node_id, **tags)
            previous = node_id
        body.flow(previous, "_joined")
    body.nodes.append(_Node("_joined", "MergeNode", "joined"))
    body.last = "_joined"
    main.node("_final", "ActivityFinalNode", "end")
    b.activity(
        "_main",
        "main",
        main,
        [("R", "Integer", int(rounds)), ("WORK", "Real", float(work)), ("SIZE", "Integer", int(size))],
    )
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


def allreduce_model(rounds: int = 2000, *, work: float = 1e-3, size: int = 8, name: str = "allreduce") -> str:
    """An all-reduce loop: each process computes ``WORK`` seconds and joins an all-reduce of
    ``SIZE`` bytes, ``R`` times in a ``loop+`` structured node (globals as in :func:`ring_model`).
    """
    b = XmiBuilder(name)
    main = Region("_main")
    main.node("_init", "InitialNode", "start")
    body = main.structured("_rounds", "rounds")
    b.apply("LoopPlus", "StructuredActivityNode", "_rounds", iterations="R")
    _action(b, body, "_compute", "compute", "ActionPlus", cost="WORK")
    _action(b, body, "_reduce", "reduce", "AllreducePlus", size="SIZE")
    main.node("_final", "ActivityFinalNode", "end")
    b.activity(
        "_main",
        "main",
        main,
        [("R", "Integer", int(rounds)), ("WORK", "Real", float(work)), ("SIZE", "Integer", int(size))],
    )
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


def threads_model(rounds: int = 2000, *, threads: int = 4, work: float = 1e-3, name: str = "threads") -> str:
    """Each process runs ``R`` OpenMP-style parallel regions (``parallel+``) of ``T`` threads, each
    thread computing ``WORK`` seconds; globals as in :func:`ring_model`."""
    b = XmiBuilder(name)
    main = Region("_main")
    main.node("_init", "InitialNode", "start")
    body = main.structured("_rounds", "rounds")
    b.apply("LoopPlus", "StructuredActivityNode", "_rounds", iterations="R")
    team = body.structured("_team", "team")
    b.apply("ParallelPlus", "StructuredActivityNode", "_team", threads="T")
    _action(b, team, "_work", "work", "ActionPlus", cost="WORK")
    main.node("_final", "ActivityFinalNode", "end")
    b.activity(
        "_main",
        "main",
        main,
        [("R", "Integer", int(rounds)), ("T", "Integer", int(threads)), ("WORK", "Real", float(work))],
    )
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


#: Stereotype and tags of each collective in :func:`bsp_model`.
_COLLECTIVES: dict[str, tuple[str, dict[str, str]]] = {
    "barrier": ("BarrierPlus", {}),
    "allreduce": ("AllreducePlus", {"size": "8 * NAT"}),
    "bcast": ("BcastPlus", {"root": "0", "size": "1024"}),
    "reduce": ("ReducePlus", {"root": "0", "size": "64"}),
    "allgather": ("AllgatherPlus", {"size": "16"}),
    "alltoall": ("AlltoallPlus", {"size": "32"}),
    "gather": ("GatherPlus", {"root": "0", "size": "64"}),
    "scatter": ("ScatterPlus", {"root": "0", "size": "64"}),
}


def bsp_model(
    *,
    steps: int = 3,
    nat: int = 32,
    collectives: Sequence[str] = ("allreduce", "barrier"),
    name: str = "bsp",
) -> str:
    """A bulk-synchronous model: ``STEPS`` supersteps of imbalanced compute, a decision on
    the problem size ``NAT``, a decision on the rank, and the given collectives.

    It has no point-to-point messages, so the analytic fast path applies; the
    decisions make control flow depend on a parameter (uniform per grid point)
    and on ``pid`` (different across processes).
    """
    unknown = [kind for kind in collectives if kind not in _COLLECTIVES]
    if unknown:
        raise ValueError(f"unknown collective {unknown[0]!r}; known: {', '.join(sorted(_COLLECTIVES))}")
    b = XmiBuilder(name)
    main = Region("_main")
    main.node("_init", "InitialNode", "start")
    _action(b, main, "_setup", "setup", "ActionPlus", cost="1e-3 * log2(nprocs + 1)")
    body = main.structured("_steps", "supersteps")
    b.apply("LoopPlus", "StructuredActivityNode", "_steps", iterations="STEPS")
    _action(b, body, "_work", "work", "ActionPlus", cost="ceil(NAT / nprocs) * 2e-3 * (1 + (pid % 3) / 4)")
    # a decision on the problem size: the same on every process, different across a NAT sweep
    body.node("_size_dec", "DecisionNode", "big?")
    body.node("_big", "OpaqueAction", "big_extra", follow=False)
    body.flow("_size_dec", "_big", guard="NAT > 40")
    b.apply("ActionPlus", "Action", "_big", cost="NAT * 1e-4")
    body.node("_small", "OpaqueAction", "small_extra", follow=False)
    body.flow("_size_dec", "_small", guard="else")
    b.apply("ActionPlus", "Action", "_small", cost="5e-4")
    body.node("_size_merge", "MergeNode", "merge_size", follow=False)
    body.flow("_big", "_size_merge")
    body.flow("_small", "_size_merge")
    # a decision on the rank: different across processes
    body.node("_rank_dec", "DecisionNode", "root?")
    body.node("_root_io", "OpaqueAction", "root_io", follow=False)
    body.flow("_rank_dec", "_root_io", guard="pid = 0")
    b.apply("ActionPlus", "Action", "_root_io", cost="3e-3")
    body.node("_rank_merge", "MergeNode", "merge_rank", follow=False)
    body.flow("_rank_dec", "_rank_merge", guard="else")
    body.flow("_root_io", "_rank_merge")
    for index, kind in enumerate(collectives):
        stereotype, tags = _COLLECTIVES[kind]
        _action(b, body, f"_coll{index}", f"{kind}_{index}", stereotype, cost="1e-5", **tags)
    _action(b, main, "_finish", "finish", "ActionPlus", cost="2e-3 if pid == 0 else 1e-3")
    main.node("_final", "ActivityFinalNode", "end")
    b.activity("_main", "main", main, [("STEPS", "Integer", int(steps)), ("NAT", "Integer", int(nat))])
    b.apply("ModelPlus", "Activity", "_main")
    return b.document()


def write_model(path: str | os.PathLike[str], text: str) -> Path:
    """Write a generated model with the project's safe writer, creating its folder."""
    from uml2perf_runtime.output.files import write_output

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_output(target, text, what="model")


def main(argv: Sequence[str] | None = None) -> int:
    """``python benchmarks/synthetic.py KIND OUT [options]``: write a synthetic model."""
    import argparse

    parser = argparse.ArgumentParser(prog="python benchmarks/synthetic.py", description=main.__doc__)
    parser.add_argument("kind", choices=("chain", "ring", "ring_rendezvous", "allreduce", "threads", "bsp"))
    parser.add_argument("output")
    parser.add_argument("--actions", type=int, default=20000, help="chain: number of actions")
    parser.add_argument("--rounds", type=int, default=2000, help="rings, allreduce, threads: rounds")
    parser.add_argument("--steps", type=int, default=3, help="bsp: supersteps")
    args = parser.parse_args(argv)
    if args.kind == "chain":
        text = chain_model(args.actions)
    elif args.kind == "ring":
        text = ring_model(args.rounds)
    elif args.kind == "ring_rendezvous":
        text = rendezvous_ring_model(args.rounds)
    elif args.kind == "allreduce":
        text = allreduce_model(args.rounds)
    elif args.kind == "threads":
        text = threads_model(args.rounds)
    else:
        text = bsp_model(steps=args.steps)
    write_model(args.output, text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
