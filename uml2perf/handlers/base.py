"""The ContentHandler: what a generator implements to emit one representation.

A handler is driven by a :class:`~uml2perf.navigation.traversal.Traverser`:
for every element the navigator reaches, ``visit(element)`` is called, then the
element's children, then ``leave(element)``.  ``visit`` dispatches to
``visit_<Kind>`` and ``leave`` to ``leave_<Kind>``, where the kinds of an
element are tried from the most to the least specific (for a model node: its
UML metaclass such as ``DecisionNode``, then ``Node``; for a statement: its
class such as ``If``, then ``Statement``).  Returning ``False`` from a visit
method skips the element's children (and its ``leave``).

An element no method handles reaches :meth:`ContentHandler.generic_visit`,
which records a warning once per kind instead of skipping silently.

Writing a third-party handler::

    class CsvHandler(ContentHandler):
        name = "csv"
        suffix = ".csv"
        navigator = "graph"          # the raw model in file order

        def start(self, job):
            self.rows = ["id,name,kind"]

        def visit_Node(self, node):
            self.rows.append(f"{node.id},{node.name},{node.kind.value}")

        def visit_Edge(self, edge):
            return False

        def finish(self):
            return "\\n".join(self.rows) + "\\n"

and register it in the package's ``pyproject.toml``::

    [project.entry-points."uml2perf.handlers"]
    csv = "my_package.csv_handler:CsvHandler"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import Diagnostic, Location, Severity
from ..model import Activity, Edge, Model, Node
from ..navigation.structure import RecoveredModel, Statement


@dataclass
class GenerationJob:
    """Everything a handler may need about the current generation run."""

    model: Model
    recovered: RecoveredModel | None
    main: Activity | None
    options: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class HandlerProtocol(Protocol):
    """The interface the generation layer relies on (``ContentHandler`` implements it)."""

    name: str
    suffix: str
    navigator: str

    def start(self, job: GenerationJob) -> None: ...

    def visit(self, element: Any) -> bool | None: ...

    def leave(self, element: Any) -> None: ...

    def finish(self) -> str: ...


def element_kinds(element: Any) -> tuple[str, ...]:
    """Dispatch names of ``element``, most specific first."""
    if isinstance(element, Node):
        generic = "".join(part.capitalize() for part in element.kind.value.split("_")) + "Node"
        names = [element.uml_type, generic, "Node"]
        return tuple(dict.fromkeys(n for n in names if n and n.isidentifier()))
    if isinstance(element, Edge):
        return ("ObjectFlow" if element.kind == "object" else "ControlFlow", "Edge")
    if isinstance(element, Statement):
        return (type(element).__name__, "Statement")
    return (type(element).__name__,)


#: Markers in the method caches: type not seen yet; a model node (dispatch depends on more than its type).
_UNKNOWN = object()
_PER_NODE = object()


class ContentHandler:
    """Base class of every content handler: visit/leave dispatch, diagnostics, output naming.

    Subclasses set :attr:`name`, :attr:`suffix` and :attr:`navigator`
    (``"structure"`` for the recovered statement tree, ``"graph"`` for the raw
    model), implement ``visit_<Kind>``/``leave_<Kind>`` methods, and return
    their text from :meth:`finish`.
    """

    name: ClassVar[str] = "handler"
    suffix: ClassVar[str] = ".txt"
    navigator: ClassVar[str] = "structure"
    description: ClassVar[str] = ""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options: dict[str, Any] = dict(options or {})
        self.diagnostics: list[Diagnostic] = []
        self.job: GenerationJob | None = None
        self._visitors: dict[Any, Any] = {}  # type (or node key) -> method, None, or _PER_NODE
        self._leavers: dict[Any, Any] = {}
        self._unhandled: set[str] = set()

    # -- life cycle ----------------------------------------------------------

    def start(self, job: GenerationJob) -> None:
        """Called once before the walk."""
        self.job = job

    def finish(self) -> str:
        """Called once after the walk; returns the generated text."""
        return ""

    def output_name(self, model: Model) -> str:
        """The file name a CLI should suggest for this output."""
        stem = Path(model.source).stem if model.source else (model.name or "model")
        return stem + self.suffix

    # -- dispatch ------------------------------------------------------------

    def visit(self, element: Any) -> bool | None:
        """Dispatch to ``visit_<Kind>``; False means: skip the children."""
        # one dict lookup per element once its type is known (a model visits tens of thousands)
        method = self._visitors.get(type(element), _UNKNOWN)
        if method is _UNKNOWN or method is _PER_NODE:
            method = self._method(element, self._visitors, "visit_")
        if method is None:
            return self.generic_visit(element)
        return method(element)

    def leave(self, element: Any) -> None:
        """Dispatch to ``leave_<Kind>`` when the handler has one."""
        method = self._leavers.get(type(element), _UNKNOWN)
        if method is _UNKNOWN or method is _PER_NODE:
            method = self._method(element, self._leavers, "leave_")
        if method is not None:
            method(element)

    def generic_visit(self, element: Any) -> bool | None:
        """No ``visit_<Kind>`` matched: note it once per kind, keep walking."""
        kind = element_kinds(element)[0]
        if kind not in self._unhandled:
            self._unhandled.add(kind)
            location = getattr(element, "location", None) or getattr(
                getattr(element, "node", None), "location", None
            )
            self.warn(
                f"the {self.name} handler has no rule for {kind} elements; they are left out of its output",
                location if isinstance(location, Location) else Location(),
                code="unhandled-kind",
            )
        return True

    def _method(self, element: Any, cache: dict[Any, Any], prefix: str) -> Callable[[Any], Any] | None:
        """The method for ``element``, cached by type (by metaclass and kind for model nodes)."""
        key: Any = type(element)
        if isinstance(element, Node):
            cache[key] = _PER_NODE  # the type alone does not decide: see the key below
            key = (Node, element.uml_type, element.kind)
        if key in cache:
            return cache[key]
        found = None
        for kind in element_kinds(element):
            found = getattr(self, prefix + kind, None)
            if found is not None:
                break
        cache[key] = found
        return found

    # -- diagnostics -----------------------------------------------------------

    def warn(
        self,
        message: str,
        location: Location | None = None,
        *,
        code: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.diagnostics.append(Diagnostic(Severity.WARNING, message, location or Location(), hint, code))

    def info(self, message: str, location: Location | None = None, *, code: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(Severity.INFO, message, location or Location(), None, code))
