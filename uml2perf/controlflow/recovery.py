"""Structured regions: from a region's graph to a :class:`~.ir.Sequence` of statements.

* a chain of nodes becomes a :class:`~.ir.Sequence`;
* a decision becomes an :class:`~.ir.If` whose branches end at the decision's
  immediate post-dominator (the merge), ``else`` last;
* a cycle through a merge becomes a :class:`~.ir.While` (see :mod:`.loops`),
  with ``break``/``continue`` where edges leave the loop or return to its header;
* a fork becomes a :class:`~.ir.Parallel` whose branches end at the fork's
  immediate post-dominator (the join);
* what no structured form describes becomes a state machine (:mod:`.state_machine`).

Recovery works on ids and keeps ties in file order, so the same model always
gives the same tree.  The statement of each executable node comes from
:mod:`.nodes` through :attr:`.graph.Shared.statement`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import Diagnostic, Severity
from ..model import Node, NodeKind, Region
from .graph import ENTRY, EXIT, Barrier, Context, LoopContext, Unstructured, plain_action
from .ir import (
    FINAL_KINDS,
    Branch,
    Break,
    Continue,
    Exec,
    If,
    Parallel,
    Return,
    Run,
    Sequence,
    Statement,
    strip_tail,
)
from .loops import LoopRecovery
from .state_machine import StateMachineRecovery
from .token_flow import concurrent, token_flow


class RegionRecovery(LoopRecovery, StateMachineRecovery):
    """Recovers one region (activity or structured node) into a :class:`~.ir.Sequence`."""

    #: above this many statements per node the structured form is duplicating too much
    DUPLICATION_LIMIT = 4

    @property
    def concurrent(self) -> bool:
        """The region forks somewhere (see :func:`.token_flow.concurrent`)."""
        if self._concurrent is None:
            # data flows through forks (fUML) keep their structured or state-machine reading
            self._concurrent = not self.data_flows and concurrent(self)
        return self._concurrent

    @property
    def data_flows(self) -> bool:
        """The region orders its nodes with object flows too: fUML-style data flow through forks,
        which keeps the structured (or state-machine) reading it always had."""
        return any(e.kind == "object" for e in self.region.edges)

    @property
    def joins(self) -> frozenset[str]:
        """Joins with several incoming flows: only the end of a fork's branches may reach them."""
        if self._joins is None:
            self._joins = frozenset(
                n
                for n, node in self.nodes.items()
                if node.kind is NodeKind.JOIN and len(self.pred[n]) > 1 and not self.data_flows
            )
        return self._joins

    # ------------------------------------------------------------------ entry point

    def recover(self, *, keep_final: bool = False) -> Sequence:
        """The whole region as a statement sequence (tail returns removed).

        ``keep_final`` keeps the return of an activity final at the end: a loop
        node's section ends there, but a final node ends the whole loop node.

        Object flows carry data; where they also order the flow with a
        structured (or state-machine) form they are kept.  fUML-style data
        flow through forks into loops has neither, so such a region is
        recovered once more from its control flows alone, with a note.
        """
        if self.chain is not None:
            return self._recover_chain(self.chain, keep_final)
        mark = len(self.shared.diagnostics)
        if self.shared.tokens:
            return Sequence((token_flow(self, "token-flow form asked for", keep_final=keep_final),))
        try:
            return self._recover(keep_final)
        except (Unstructured, RecursionError):
            control = tuple(e for e in self.region.edges if e.kind != "object")
            if len(control) == len(self.region.edges):
                return self._token_flow(keep_final)
        del self.shared.diagnostics[mark:]
        retry = RegionRecovery(
            Region(self.region.nodes, control), self.owner, self.shared, section=self.section
        )
        try:
            body = retry._recover(keep_final)
        except (Unstructured, RecursionError):
            body = retry._token_flow(keep_final)
        dropped = len(self.region.edges) - len(control)
        self.shared.diagnostics.append(
            Diagnostic(
                Severity.INFO,
                f"{dropped} object flow{'s' if dropped != 1 else ''} ignored:"
                " this data flow has no structured form, "
                "so the control flows alone order the region",
                self.owner,
                code="object-flows-ignored",
            )
        )
        return body

    def _recover_chain(self, chain: list[Node], keep_final: bool) -> Sequence:
        """What :meth:`_seq` gives for a straight chain, in one pass: its statements in order.

        Consecutive plain actions become one :class:`~.ir.Run` (a single one
        its :class:`~.ir.Exec`).  The walk ends at a final node (a ``return``)
        or at a node without a successor (leaving the region, a bare
        ``return``); the tail return is then dropped exactly as for any other
        region.
        """
        shared = self.shared
        body: list[Statement] = []
        run: list[Node] = []
        # whether an action is plain depends on its annotation alone, and a large chain shares a
        # handful of annotations (one PerfSpec per distinct application set): asked once per annotation,
        # keyed by identity (the nodes keep every annotation alive)
        plain_by_annotation: dict[int, bool] = {}
        for node in chain:
            if node.kind is NodeKind.ACTION:
                key = id(node.perf)
                plain = plain_by_annotation.get(key)
                if plain is None:
                    plain = plain_by_annotation[key] = plain_action(node)
            else:
                plain = False
            if plain:
                run.append(node)
                continue
            if run:
                body.append(_run(run))
                run = []
            stmt = shared.statement(node, shared)
            if stmt is not None:
                body.append(stmt)
        if run:
            body.append(_run(run))
        last = chain[-1]
        body.append(Return(last) if last.kind in FINAL_KINDS else Return())
        return Sequence(tuple(strip_tail(body, keep_final=keep_final)))

    def _token_flow(self, keep_final: bool) -> Sequence:
        """The region as a token flow (any graph has one), with a note saying why."""
        flow = token_flow(self, "no structured form fits this flow", keep_final=keep_final)
        self.shared.diagnostics.append(
            Diagnostic(
                Severity.INFO,
                "this flow has concurrency and no structured form (for example a fork whose branches loop"
                " back before it, or a join only some branches reach); it is generated in token-flow form:"
                " one function per node, tokens passed along the flows, joins waiting for all their inputs",
                self.owner,
                code="token-flow",
            )
        )
        return Sequence((flow,))

    def _recover(self, keep_final: bool = False) -> Sequence:
        try:
            if self.shared.flat:
                raise Unstructured(ENTRY)
            body = self._seq(ENTRY, EXIT, ())
        except Unstructured:
            if self.concurrent:
                raise
            self._emitted = 0
            body = [self._state_machine(ENTRY, (), follow=EXIT)]
        except RecursionError:
            if self.concurrent:
                raise
            self._emitted = 0
            body = [self._state_machine(ENTRY, (), follow=EXIT)]
            self.shared.warn(
                "this flow is nested too deeply for structured code:"
                " generated as a flat state machine instead "
                "(same behaviour, less readable code)",
                self.owner,
                "flat-state-machine",
                hint="split deeply nested parts into activities of their own for structured code",
            )
        return Sequence(tuple(strip_tail(body, keep_final=keep_final)))

    # ------------------------------------------------------------------ the walk

    def _arrive(self, node_id: str, ctx: Context) -> list[Statement] | None:
        """Statements ending the walk when ``node_id`` is a loop jump, else None."""
        if not ctx:
            return None
        top = ctx[-1]
        if isinstance(top, Barrier):
            if node_id in top.headers or (
                top.body is not None and node_id not in top.body and not self._terminates(node_id)
            ):
                raise Unstructured(node_id)
            return None
        if node_id == top.header:
            return [Continue()]
        if node_id in top.body:
            return None
        if node_id == top.follow:
            return [Break()]
        # leaving the loop somewhere else: run that path, then leave
        outer = [c for c in ctx[:-1] if isinstance(c, LoopContext)]
        barrier = Barrier(
            outer[-1].body if outer else None,
            frozenset(c.header for c in outer),
        )
        stop = top.follow if top.follow is not None else EXIT
        path, ended = self._seq_ended(node_id, stop, (*ctx[:-1], barrier))
        return path if ended else [*path, Break()]

    def _seq_ended(self, start: str, stop: str, ctx: Context) -> tuple[list[Statement], bool]:
        body = self._seq(start, stop, ctx)
        return body, bool(body) and isinstance(body[-1], (Return, Break, Continue))

    def _seq(self, start: str, stop: str, ctx: Context, *, header: str | None = None) -> list[Statement]:
        out: list[Statement] = []
        cur = start
        first = True
        joined: str | None = None
        while True:
            if not (first and cur == header):
                jump = self._arrive(cur, ctx)
                if jump is not None:
                    out.extend(jump)
                    return out
                if cur == stop:
                    return out
                if cur == EXIT:
                    out.append(Return())
                    return out
                if cur in self.headers and not any(
                    isinstance(c, LoopContext) and c.header == cur for c in ctx
                ):
                    stmt, follow = self._guarded(cur, ctx, self._loop)
                    out.append(stmt)
                    if follow is None:
                        return out
                    cur = follow
                    continue
            first = False
            if cur in self.joins and cur != joined:
                raise Unstructured(cur)  # a join no fork's branches end at: only tokens can wait there
            joined = None
            self._emitted += 1
            if self._emitted > self.DUPLICATION_LIMIT * (len(self.nodes) + 8):
                raise Unstructured(cur)
            node = self.nodes.get(cur)
            if node is not None:
                if node.kind in FINAL_KINDS:
                    out.append(Return(node))
                    return out
                own = self.shared.statement(node, self.shared)
                if own is not None:
                    out.append(own)
            outs = self.succ[cur]
            if len(outs) == 1:
                cur = outs[0][1]
                continue
            if not outs:
                return out
            stmt2, follow = self._guarded(
                cur, ctx, lambda c, x: self._diverge(c, stop, x), emitted=node is not None
            )
            out.append(stmt2)
            if follow is None:
                return out
            if isinstance(stmt2, Parallel):
                joined = follow  # the join the branches just met at
            cur = follow

    def _guarded(
        self,
        cur: str,
        ctx: Context,
        build: Callable[[str, Context], tuple[Statement, str | None]],
        *,
        emitted: bool = False,
    ) -> tuple[Statement, str | None]:
        """Build a construct at ``cur``; on failure fall back to a state machine there.

        ``emitted`` says the node's own statement is already out, so the state
        machine must not run it a second time.
        """
        try:
            return build(cur, ctx)
        except Unstructured:
            if self.concurrent:
                raise  # a state machine runs one token: the whole region takes the token-flow form
            follow = self._sm_follow(cur)
            return self._state_machine(cur, ctx, emitted=emitted, follow=follow), follow

    def _separate_branches(self, fork: str, follow: str) -> None:
        """Branches of a fork that share a node run it once per token: only the token flow says that."""
        seen: set[str] = set()
        for _, target in self.succ[fork]:
            branch = _branch_nodes(self, target, follow)
            if branch & seen:
                raise Unstructured(fork)
            seen |= branch

    def _diverge(self, cur: str, stop: str, ctx: Context) -> tuple[Statement, str | None]:
        """A node with several successors: a decision (If) or a fork (Parallel)."""
        outs = self.succ[cur]
        node = self.nodes.get(cur)
        follow = self.ipdom.get(cur, EXIT)
        loop = next((c for c in reversed(ctx) if isinstance(c, LoopContext)), None)
        if not self.data_flows and self.guarded_fork(cur):
            if node is not None and node.kind is not NodeKind.FORK:
                self._conditions(cur)  # says how the guards are read
            raise Unstructured(cur)  # tokens on every flow whose guard holds: only the token flow has that
        if self._is_fork(cur):
            if follow in self.joins and (
                len(self.pred[follow]) != len(outs)
                or not all(self.dominates(cur, p) for p in self.pred[follow])
            ):
                raise Unstructured(follow)  # the join waits for other flows than one per branch of this fork
            if not self.data_flows:
                self._separate_branches(cur, follow)
            inner_ctx: Context = ()
            if ctx and isinstance(ctx[-1], Barrier):
                inner_ctx = (ctx[-1],)
            elif loop is not None:
                headers = frozenset(c.header for c in ctx if isinstance(c, LoopContext))
                inner_ctx = (Barrier(loop.body, headers),)
            branches = tuple(
                Sequence(tuple(strip_tail(self._seq(target, follow, inner_ctx), keep_final=True)))
                for _, target in outs
            )
            return Parallel(node, branches), follow
        if ctx and isinstance(ctx[-1], LoopContext):
            top = ctx[-1]
            if follow == top.header or follow not in top.body:
                branch_stop: str | None = None
            else:
                branch_stop = follow
        else:
            branch_stop = follow if follow != EXIT else stop
        branches_out: list[Branch] = []
        for cond, target in self._conditions(cur):
            body = self._seq(target, branch_stop if branch_stop is not None else "\x00none", ctx)
            branches_out.append(Branch(cond, Sequence(tuple(body))))
        return If(node, tuple(branches_out)), branch_stop


def _branch_nodes(graph: RegionRecovery, start: str, follow: str) -> set[str]:
    """The nodes a fork branch from ``start`` runs before ``follow`` (final nodes left out: they only end)."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        current = stack.pop()
        if current in seen or current == follow or current == EXIT:
            continue
        node = graph.nodes.get(current)
        if node is not None and node.kind in FINAL_KINDS:
            continue
        seen.add(current)
        stack.extend(target for _, target in graph.succ[current])
    return seen


def _run(nodes: list[Node]) -> Statement:
    """The statement of consecutive plain actions: a :class:`Run`, or the :class:`Exec` of a single one."""
    return Run(tuple(nodes)) if len(nodes) > 1 else Exec(nodes[0])
