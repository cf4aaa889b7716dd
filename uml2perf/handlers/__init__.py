"""Content handlers: built-in and third-party generators.

A handler implements :class:`~uml2perf.handlers.base.ContentHandler` (usually
by subclassing it) and is registered under the entry-point group
``uml2perf.handlers`` (the built-ins ``python``, ``dot`` and ``json`` are
registered the same way).
"""

from .base import ContentHandler, GenerationJob, Need, element_kinds
from .registry import GROUP, HandlerInfo, available_handlers, create_handler, handler_table, load_handler

__all__ = [
    "GROUP",
    "ContentHandler",
    "GenerationJob",
    "HandlerInfo",
    "Need",
    "available_handlers",
    "create_handler",
    "element_kinds",
    "handler_table",
    "load_handler",
]
