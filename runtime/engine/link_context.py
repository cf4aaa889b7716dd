"""Contexts of a run on a machine with ``[network.topology]``: messages are flows on shared links.

The simulation picks these classes once per run, as it picks the tracing or the general
context: the plain :class:`~.context.Context` keeps its direct routes for the per-pair network,
and these send every message and collective through :mod:`..operations.over_links`.
"""

from __future__ import annotations

from typing import Any

from ..operations import over_links as _links
from ..spec import Element
from .context import GeneralContext, TracingContext


class LinkContext(GeneralContext):
    """A process or thread whose messages share the links of the machine's topology."""

    __slots__ = ()

    def send(self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        self.cur = elem
        return _links.send(self, elem, dest, size, tag, cost)

    def recv(self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        self.cur = elem
        return _links.recv(self, elem, source, size, tag, cost)

    def isend(self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        self.cur = elem
        return _links.isend(self, elem, dest, size, tag, cost)

    def irecv(self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0) -> Any:
        self.cur = elem
        return _links.irecv(self, elem, source, size, tag, cost)

    def _collective(self, elem: Element, kind: str, root: Any, size: Any, cost: Any) -> Any:
        self.cur = elem
        return _links.collective(self, elem, kind, root, size, cost)


class LinkTracingContext(LinkContext, TracingContext):
    """:class:`LinkContext` that also records the trace."""

    __slots__ = ()


def context_class(tracing: bool) -> type[GeneralContext]:
    """The context class of a run on shared links."""
    return LinkTracingContext if tracing else LinkContext
