"""Operations made of other operations: ``sendrecv`` (``MPI_Sendrecv``) as isend, recv and wait.

Why a composite and not a route of its own: an ``MPI_Sendrecv`` is defined as a non-blocking
send, a blocking receive and a wait for that send, run by one call; built from the context's own
methods it takes whatever route those take (the per-pair network's direct routes, shared links,
tracing) and its time is recorded under its one element, as the program's profile shows it.
"""

from __future__ import annotations

from typing import Any

from ..spec import Element

__all__ = ["sendrecv"]


def sendrecv(
    ctx: Any, elem: Element, dest: Any, source: Any, size: Any, recvsize: Any, tag: Any, cost: Any
) -> Any:
    """Send ``size`` bytes to ``dest`` and receive ``recvsize`` (default ``size``) from ``source``.

    The send is posted first and waited for last, so two processes that exchange with each
    other cannot deadlock, whatever the protocol (eager or rendezvous) of the message sizes;
    a local ``cost`` is spent before the receive, as a receive's own is.
    """
    request = yield from ctx.isend(elem, dest, size, tag)
    yield from ctx.recv(elem, source, size if recvsize is None else recvsize, tag, cost)
    yield from ctx.wait(elem, [request])
