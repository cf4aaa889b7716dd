"""The ContentHandler: what a generator implements to emit one representation.

A handler declares what it ``needs``: ``"controlflow"`` (the default) walks the
statement tree recovered from each activity (:mod:`uml2perf.controlflow`) and
gives it in ``job.recovered``; ``"model"`` walks the neutral model as drawn
(activities, their nodes with nested regions inside their owner, then their
flows) and recovers nothing.

The :class:`~uml2perf.navigation.traversal.Traverser` calls ``visit(element)``
for every element, then the element's children, then ``leave(element)``.
``visit`` dispatches to ``visit_<Kind>`` and ``leave`` to ``leave_<Kind>``,
where the kinds of an element are tried from the most to the least specific
(for a model node: its UML metaclass such as ``DecisionNode``, then ``Node``;
for a statement: its class such as ``If``, then ``Statement``).  Returning
``False`` from a visit method skips the element's children (and its ``leave``).

Containers (the model, an activity, an activity body, a branch, a state, a
lane) need no method: their children are walked quietly.  Any other element
no method handles reaches :meth:`ContentHandler.generic_visit`, which records a
warning once per kind instead of skipping silently.

Writing a third-party handler::

    class CsvHandler(ContentHandler):
        name = "csv"
        suffix = ".csv"
        needs = "model"              # the neutral model in file order

        def start(self, job):
            super().start(job)
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

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..controlflow.ir import ActivityBody, Branch, RecoveredModel, Run, State, Statement, TokenNode
from ..errors import Diagnostic, Location, Severity
from ..model import Activity, Edge, Model, Node, NodeKind
from ..navigation.traversal import Element, Lane

#: What a handler needs: the neutral model as drawn, or the control flow recovered from it.
Need = Literal["model", "controlflow"]

#: Values of a handler's options (from the command line or the API).
OptionValue = str | int | float | bool | None


@dataclass
class GenerationJob:
    """Everything a handler may need about the current generation run."""

    model: Model
    recovered: RecoveredModel | None
    main: Activity | None
    options: Mapping[str, OptionValue] = field(default_factory=dict)


def element_kinds(element: Element) -> tuple[str, ...]:
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


#: Elements that only hold others: without a method for them, their children are walked quietly.
CONTAINERS: tuple[type, ...] = (
    Model,
    Activity,
    RecoveredModel,
    ActivityBody,
    Branch,
    State,
    Lane,
    Run,
    TokenNode,
)

#: A ``visit_<Kind>`` or ``leave_<Kind>`` method, bound to its handler.
_Method = Callable[[Element], bool | None]
#: What the method caches are keyed by: an element's type, or for a model node (whose dispatch
#: depends on more than its type) its metaclass and kind.
_Key = type | tuple[type, str, NodeKind]


def _key(element: Element) -> _Key:
    """What decides an element's methods: its type, and for a model node its metaclass and kind too."""
    if isinstance(element, Node):
        return (Node, element.uml_type, element.kind)
    return type(element)


_NAVIGATOR_NEEDS: Mapping[str, Need] = {"graph": "model", "structure": "controlflow"}


class ContentHandler:
    """The one contract of content handlers, with the dispatch every handler inherits.

    A handler class sets :attr:`name`, :attr:`suffix` and :attr:`needs`,
    implements ``visit_<Kind>``/``leave_<Kind>`` methods, and returns its text
    from :meth:`finish`; the dispatch, the diagnostics and the output naming
    come from here.  The traverser itself needs only ``visit`` and ``leave``
    (:class:`~uml2perf.navigation.traversal.Visitor`).
    """

    name: ClassVar[str] = "handler"
    suffix: ClassVar[str] = ".txt"
    needs: ClassVar[Need] = "controlflow"
    description: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        navigator = cls.__dict__.get("navigator")
        if isinstance(navigator, str) and "needs" not in cls.__dict__:
            # the attribute handlers used to declare their walk with: "graph" or "structure"
            warnings.warn(
                f"{cls.__name__}: navigator = {navigator!r} is deprecated,"
                f" write needs = {_NAVIGATOR_NEEDS.get(navigator, 'controlflow')!r}",
                DeprecationWarning,
                stacklevel=2,
            )
            cls.needs = _NAVIGATOR_NEEDS.get(navigator, "controlflow")

    def __init__(self, options: Mapping[str, OptionValue] | None = None) -> None:
        self.options: dict[str, OptionValue] = dict(options or {})
        self.diagnostics: list[Diagnostic] = []
        self.job: GenerationJob | None = None
        self._visitors: dict[_Key, _Method | None] = {}  # the method, or None: there is none
        self._leavers: dict[_Key, _Method | None] = {}
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

    def visit(self, element: Element) -> bool | None:
        """Dispatch to ``visit_<Kind>``; False means: skip the children."""
        # one dict lookup per element once its kind is known (a model visits tens of thousands)
        key = _key(element)
        method = (
            self._visitors[key]
            if key in self._visitors
            else self._find(element, self._visitors, key, "visit_")
        )
        if method is None:
            return self.generic_visit(element)
        return method(element)

    def leave(self, element: Element) -> None:
        """Dispatch to ``leave_<Kind>`` when the handler has one."""
        key = _key(element)
        method = (
            self._leavers[key] if key in self._leavers else self._find(element, self._leavers, key, "leave_")
        )
        if method is not None:
            method(element)

    def generic_visit(self, element: Element) -> bool | None:
        """No ``visit_<Kind>`` matched: walk a container's children, note any other kind once."""
        if isinstance(element, CONTAINERS):
            return True
        kind = element_kinds(element)[0]
        if kind not in self._unhandled:
            self._unhandled.add(kind)
            self.warn(
                f"the {self.name} handler has no rule for {kind} elements; they are left out of its output",
                _location_of(element),
                code="unhandled-kind",
            )
        return True

    def _find(
        self, element: Element, cache: dict[_Key, _Method | None], key: _Key, prefix: str
    ) -> _Method | None:
        """The method for ``element``, most specific kind first; remembered under ``key``."""
        found: _Method | None = None
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


def _location_of(element: Element) -> Location:
    """Where an element is in the input file, when it knows."""
    if isinstance(element, (Node, Edge, Activity)):
        return element.location
    node = getattr(element, "node", None)  # statements name the node they came from
    return node.location if isinstance(node, Node) else Location()
