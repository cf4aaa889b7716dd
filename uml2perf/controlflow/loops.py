"""Loops of a region: natural loops found with dominators, shaped as ``while`` tested at the top or bottom."""

from __future__ import annotations

from ..model import Node
from .graph import EXIT, Context, LoopContext, RegionGraph, Unstructured
from .ir import Branch, Break, CondKind, Continue, If, Sequence, Statement, While


class LoopRecovery(RegionGraph):
    """The loop steps of region recovery: where a loop is left, and its statement."""

    def _loop_follow(self, header: str, body: frozenset[str]) -> str | None:
        exits = []
        for member in sorted(body, key=self.order.__getitem__):
            for _, target in self.succ[member]:
                if target not in body and target not in exits:
                    exits.append(target)
        if not exits:
            return None
        if len(exits) == 1:
            return exits[0]
        lasting = [t for t in exits if not self._terminates(t)]
        if len(lasting) == 1:
            return lasting[0]
        return self.ipdom.get(header, EXIT)

    def _loop(self, header: str, ctx: Context) -> tuple[Statement, str | None]:
        if header in self._irreducible:
            raise Unstructured(header)
        body_nodes = self.headers[header]
        follow = self._loop_follow(header, body_nodes)
        if follow is None:
            self.ipdom  # noqa: B018 - records the endless-loop warning
        loop_ctx = LoopContext(header, body_nodes, follow)
        body = self._seq(header, "\x00none", (*ctx, loop_ctx), header=header)
        stmt = shape_loop(self.nodes.get(header), body)
        return stmt, follow if follow is not None else None

    # ------------------------------------------------------------------ state machine fallback


def shape_loop(header: Node | None, body: list[Statement]) -> While:
    """Give a recovered ``while True`` its readable form (test at top or at bottom)."""
    body = list(body)
    while body and isinstance(body[-1], Continue):
        body.pop()
    if body and isinstance(body[0], If) and len(body[0].branches) == 2:
        first = body[0]
        exit_index = [i for i, b in enumerate(first.branches) if _only(b.body, Break)]
        if len(exit_index) == 1 and all(b.cond.kind is not CondKind.PROBABILITY for b in first.branches):
            stay = first.branches[1 - exit_index[0]]
            leave = first.branches[exit_index[0]]
            cond = stay.cond if stay.cond.kind is CondKind.GUARD else leave.cond.negated()
            if cond.kind is CondKind.GUARD:
                rest = [*stay.body.body, *body[1:]]
                while rest and isinstance(rest[-1], Continue):
                    rest.pop()
                return While(header, cond, Sequence(tuple(rest)))
    if body and isinstance(body[-1], If) and len(body[-1].branches) == 2:
        last = body[-1]
        kinds = [(_only(b.body, Break), _only(b.body, Continue) or not b.body.body) for b in last.branches]
        if sorted(kinds) == [(False, True), (True, False)] and not last.is_random:
            leave = last.branches[0] if kinds[0][0] else last.branches[1]
            stay = last.branches[1] if kinds[0][0] else last.branches[0]
            cond = leave.cond if leave.cond.kind is CondKind.GUARD else stay.cond.negated()
            if cond.kind is CondKind.GUARD:
                body[-1] = If(last.node, (Branch(cond, Sequence((Break(),))),))
    return While(header, None, Sequence(tuple(body)))


def _only(seq: Sequence, kind: type) -> bool:
    return len(seq.body) == 1 and isinstance(seq.body[0], kind)
