"""The token game of UML activities, for flows that have no structured form.

A generated module writes such a flow as one generator function per node: the
node does its work (``yield from p.compute(...)``) and returns the tokens it
hands on, as ``(function, input)`` pairs, :data:`END` for an activity final,
or ``()`` when its token ends.  :func:`flow` plays the game:

* every token is a thread of the process (``p.fork`` branches are too): a
  token goes on in the thread that carried it, each further token it offers
  starts a thread of its own, so concurrent branches compete for the node's
  cores;
* a join (a function in ``joins``, with the number of its incoming flows)
  runs once a token has arrived on each of its inputs; a token that arrives
  earlier waits there and its thread ends; a token offered on input -1 (a
  flow coming back round a loop) passes straight in;
* an activity final ends the whole flow: the other tokens stop before their
  next node;
* the flow is over when no thread carries a token any more (tokens still
  waiting at a join are dropped, as UML drops them when the activity ends).

Contexts without threads (test stubs) get the same game played one node at
a time, the tokens taking turns in the order they were offered; the analytic
fast path refuses it (threads need the simulator).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from simpy.events import AllOf

from .engine.patterns import _region_done
from .spec import Element

__all__ = ["END", "flow"]

#: what an activity final returns: the whole flow ends
END: tuple[Any, ...] = ("end of flow",)

Node = Callable[[Any, Any], Any]


class _Game:
    """The tokens waiting at joins, and whether an activity final ended the flow."""

    __slots__ = ("joins", "waiting", "ended")

    def __init__(self, joins: Mapping[Node, int]) -> None:
        self.joins = joins
        self.waiting: dict[Node, list[int]] = {}
        self.ended = False

    def passed(self, offers: Iterable[tuple[Node, int]] | None) -> list[Node]:
        """The nodes that run next for the tokens ``offers`` hands on (a join once each input has one)."""
        ready: list[Node] = []
        if offers is END:
            self.ended = True
            return ready
        for target, port in offers or ():
            inputs = self.joins.get(target, 1)
            if inputs > 1 and port >= 0:
                counts = self.waiting.setdefault(target, [0] * inputs)
                counts[port] += 1
                if not all(counts):
                    continue
                for i in range(inputs):
                    counts[i] -= 1
            ready.append(target)
        return ready


def _carry(p: Any, v: Any, elem: Element, game: _Game, start: Node, spawn: Callable[[Node], None]) -> Any:
    """Carry one token from ``start`` until it ends or waits at a join; further tokens go to ``spawn``."""
    node: Node | None = start
    while node is not None and not game.ended:
        p.iteration(elem)
        ready = game.passed((yield from node(p, v)))
        node = ready[0] if ready else None
        for other in ready[1:]:
            spawn(other)


def flow(p: Any, elem: Element, starts: Iterable[Node], joins: Mapping[Node, int]) -> Any:
    """Play the token game from ``starts`` (see the module docstring); ``elem`` accounts the flow.

    Returns (as the generator's value) whether an activity final ended the flow.
    """
    refuse = getattr(p, "_refuse", None)
    if refuse is not None:  # the analytic context: threads need the simulator
        refuse(elem, "threads and patterns")
    game = _Game(joins)
    v = p.v
    if getattr(p, "sim", None) is None or not hasattr(p, "_new_thread"):
        yield from _one_by_one(p, v, elem, game, starts)
        return game.ended
    env = p.env
    sim = p.sim
    p.cur = elem
    begin = env._now
    threads: list[Any] = []

    def spawn(node: Node) -> None:
        tid = len(threads)
        context = p._new_thread(tid, tid + 1)
        threads.append(sim.start_thread(context, lambda t: _carry(t, v, elem, game, node, spawn)))

    for node in starts:
        spawn(node)
    p.block(elem, f"the tokens of flow {elem.describe()}")
    while True:
        alive = [thread for thread in threads if thread.is_alive]
        if not alive:
            break
        yield AllOf(env, alive)
    p.blocked_for = None
    _region_done(p, elem, begin)
    return game.ended


def _one_by_one(p: Any, v: Any, elem: Element, game: _Game, starts: Iterable[Node]) -> Any:
    """The game on a context without threads: one node at a time, the tokens taking turns in order."""
    queue: deque[Node] = deque(starts)
    while queue and not game.ended:
        p.iteration(elem)
        queue.extend(game.passed((yield from queue.popleft()(p, v))))
