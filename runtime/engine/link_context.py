"""Contexts of a run on a machine with ``[network.topology]``: messages are flows on shared links.

The simulation picks these classes once per run, as it picks the tracing or the general
context: the plain :class:`~.context.Context` keeps its direct routes for the per-pair network,
and these send every message and collective through :mod:`..operations.over_links`.
"""

from __future__ import annotations

from typing import Any

from ..operations import over_links as _links
from ..operations.registry import OPERATIONS, Operation, bind_operations, route_function
from ..spec import Element
from .context import GeneralContext, TracingContext


class LinkContext(GeneralContext):
    """A process or thread whose messages share the links of the machine's topology."""

    __slots__ = ()

    def _collective(self, elem: Element, kind: str, root: Any, size: Any, cost: Any) -> Any:
        self.cur = elem
        return _links.collective(self, elem, kind, root, size, cost)


def _links_body(op: Operation) -> str | None:
    """A point-to-point method's body on shared links: the operation's ``Routes.links`` function
    (collectives keep the per-pair methods, which call :meth:`LinkContext._collective`)."""
    if op.scope == "collective" or op.routes.links is None:
        return None
    return f"self.cur = elem\nreturn _route_{op.name}(self, elem, {', '.join(op.argument_names)}, cost)"


bind_operations(
    LinkContext,
    _links_body,
    {f"_route_{name}": route_function(op.routes.links) for name, op in OPERATIONS.items() if op.routes.links},
)


class LinkTracingContext(LinkContext, TracingContext):
    """:class:`LinkContext` that also records the trace."""

    __slots__ = ()


def context_class(tracing: bool) -> type[GeneralContext]:
    """The context class of a run on shared links."""
    return LinkTracingContext if tracing else LinkContext
