"""The fallback for flow with no structured form: numbered states in a dispatch loop.

The smallest single-entry region around the problem (an irreducible loop, a jump
out of nested loops) becomes a :class:`~.ir.StateMachine`; everything else stays
structured.
"""

from __future__ import annotations

from ..errors import Diagnostic, Severity
from ..model import Node
from .graph import EXIT, Barrier, Context, LoopContext, RegionGraph, Unstructured
from .ir import (
    FINAL_KINDS,
    Parallel,
    Return,
    Sequence,
    State,
    StateMachine,
    Statement,
    Transition,
    strip_tail,
)


class StateMachineRecovery(RegionGraph):
    """The state-machine steps of region recovery."""

    def _sm_follow(self, start: str) -> str:
        """Where a state machine started at ``start`` hands back to structured code.

        The nearest post-dominator of ``start`` from which the flow can never
        come back into the state machine's region.
        """
        follow = self.ipdom.get(start, EXIT)
        while follow != EXIT:
            region = set(self._sm_region(start, follow))
            if not (self._reachable(follow) & region):
                break
            follow = self.ipdom.get(follow, EXIT)
        return follow

    def _sm_region(self, start: str, follow: str) -> list[str]:
        seen = {start}
        order = [start]
        stack = [start]
        while stack:
            current = stack.pop()
            for _, target in self.succ[current]:
                if target != follow and target != EXIT and target not in seen:
                    seen.add(target)
                    order.append(target)
                    stack.append(target)
        return sorted(order, key=self.order.__getitem__)

    def _state_machine(
        self, start: str, ctx: Context, *, emitted: bool = False, follow: str | None = None
    ) -> Statement:
        if follow is None:
            follow = self._sm_follow(start)
        members = self._sm_region(start, follow)
        member_set = set(members)
        for member in members:
            if member != start and any(p not in member_set for p in self.pred[member]):
                raise Unstructured(member)
        if ctx:
            top = ctx[-1]
            scope = top.body
            headers = {top.header} if isinstance(top, LoopContext) else set(top.headers)
            outside = member_set - scope if scope is not None else set()
            if member_set & headers or any(not self._terminates(m) for m in outside):
                raise Unstructured(start)
        # states: maximal chains, numbered in walk order from the start
        index: dict[str, int] = {}
        chains: list[list[str]] = []
        pending = [start]
        while pending:
            head = pending.pop(0)
            if head in index:
                continue
            chain = [head]
            index[head] = len(chains)
            current = head
            while True:
                outs = self.succ[current]
                node = self.nodes.get(current)
                if len(outs) != 1 or (node is not None and node.kind in FINAL_KINDS):
                    break
                nxt = outs[0][1]
                if nxt not in member_set or nxt in index or len(self.pred[nxt]) != 1 or nxt == start:
                    break
                chain.append(nxt)
                index[nxt] = len(chains)
                current = nxt
            chains.append(chain)
            for _, target in self.succ[chain[-1]]:
                if target in member_set and target not in index:
                    pending.append(target)
            if self._is_fork(chain[-1]) and len(self.succ[chain[-1]]) > 1:
                join = self.ipdom.get(chain[-1], EXIT)
                if join in member_set and join not in index:
                    pending.append(join)
        states: list[State] = []
        for number, chain in enumerate(chains):
            body: list[Statement] = []
            nodes: list[Node] = []
            for member in chain:
                node = self.nodes.get(member)
                if node is None:
                    continue
                nodes.append(node)
                if member == start and emitted and number == 0:
                    continue
                if node.kind in FINAL_KINDS:
                    body.append(Return(node))
                else:
                    stmt = self.shared.statement(node, self.shared)
                    if stmt is not None:
                        body.append(stmt)
            last = chain[-1]
            last_node = self.nodes.get(last)
            transitions: list[Transition] = []
            if last_node is not None and last_node.kind in FINAL_KINDS:
                pass
            elif len(self.succ[last]) > 1 and self._is_fork(last):
                join = self.ipdom.get(last, EXIT)
                barrier = Barrier(frozenset(member_set), frozenset())
                branches = tuple(
                    Sequence(tuple(strip_tail(self._seq(t, join, (barrier,)), keep_final=True)))
                    for _, t in self.succ[last]
                )
                body.append(Parallel(last_node, branches))
                transitions.append(Transition(None, index.get(join, -1)))
            elif len(self.succ[last]) > 1:
                for cond, target in self._conditions(last):
                    transitions.append(Transition(cond, index.get(target, -1)))
            else:
                target = self.succ[last][0][1]
                transitions.append(Transition(None, index.get(target, -1)))
            states.append(State(number, tuple(nodes), Sequence(tuple(body)), tuple(transitions)))
        first = self.nodes.get(start) or next(iter(self.nodes.values()))
        self.shared.diagnostics.append(
            Diagnostic(
                Severity.INFO,
                "this part of the flow has no structured form (jumps into or out of loops or branches);"
                " it is generated as a state machine",
                first.location,
                code="state-machine",
            )
        )
        return StateMachine(first, tuple(states))
