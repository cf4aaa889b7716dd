"""The neutral model: what every stage after the reader sees.

The reader is the only code that knows XMI.  It turns any tool's export into
these records; navigation, handlers, generation and the checker work on them
alone.  Everything is ordered as in the input file, so that generation is
deterministic.

A model of 20,000 actions holds about 40,000 nodes and flows, so :class:`Node`
and :class:`Edge` are plain slotted records built by an ordinary ``__init__``
(about 0.4 us each), their ``location`` built only when asked for: the reader
makes them in one pass and the profile fills in ``perf`` and ``code`` of the
nodes it has just been given.  After
:func:`uml2perf.profile.apply_profile` returns, no stage changes a model: the
other records are frozen, and nodes and flows are treated as if they were.
Nodes and flows hash by their xmi id.  Stereotype applications are few (the
reader shares identical ones) and stay frozen, so the profile can key its
memo on them.

Performance annotations (the uml2perf profile, MARTE, the TOML sidecar) are
interpreted once, by :mod:`uml2perf.profile`, into a :class:`PerfSpec` per
element, so later stages never look at raw stereotype names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

from uml2perf_runtime.operations.registry import OPERATIONS

from .errors import Diagnostic, Location

_NORMALISED: dict[str, str] = {}
_IGNORED_IN_NAMES = str.maketrans("", "", "_- \t")


def normalise_name(name: str) -> str:
    """Normalise a stereotype or tag name for matching.

    Matching ignores case, ``_``, ``-`` and spaces, and treats ``+`` and
    ``Plus`` alike, because XML names cannot hold ``+``: ``action+``,
    ``ActionPlus`` and ``action_plus`` all become ``action+``.  A model has a
    handful of distinct names used thousands of times, so results are memoised.
    """
    key = _NORMALISED.get(name)
    if key is None:
        key = name.lower().translate(_IGNORED_IN_NAMES)
        if key.endswith("plus") and len(key) > 4:
            key = key[:-4] + "+"
        if len(_NORMALISED) < 65536:
            _NORMALISED[name] = key
    return key


class NodeKind(str, Enum):  # noqa: UP042 - StrEnum would change str() of members, which messages print
    """Coarse kind of an activity node, independent of the UML tool."""

    ACTION = "action"  # any executable action (OpaqueAction, Action, CallOperationAction, ...)
    CALL = "call"  # CallBehaviorAction / CallState / SubactivityState: runs another activity
    STRUCTURED = "structured"  # StructuredActivityNode, ExpansionRegion: owns a nested region
    LOOP = "loop"  # LoopNode: owns a region and a LoopSpec
    CONDITIONAL = "conditional"  # ConditionalNode: owns a region and clauses
    INITIAL = "initial"
    ACTIVITY_FINAL = "activity_final"
    FLOW_FINAL = "flow_final"
    DECISION = "decision"
    MERGE = "merge"
    FORK = "fork"
    JOIN = "join"
    OBJECT = "object"  # object nodes, parameter nodes, central buffers: no cost, pass-through


CONTROL_KINDS = frozenset(
    {
        NodeKind.INITIAL,
        NodeKind.ACTIVITY_FINAL,
        NodeKind.FLOW_FINAL,
        NodeKind.DECISION,
        NodeKind.MERGE,
        NodeKind.FORK,
        NodeKind.JOIN,
    }
)


@dataclass(frozen=True, slots=True)
class StereotypeApplication:
    """A stereotype applied to an element, with its tagged values as written.

    ``tags`` keeps the tool's tag names and raw string values in file order;
    use :meth:`tag` to look one up by normalised name.
    """

    name: str
    profile: str | None = None
    tags: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        """The normalised stereotype name (``action+``, ``pastep``...)."""
        return normalise_name(self.name)

    def tag(self, name: str) -> str | None:
        """The value of the tag whose normalised name equals ``normalise_name(name)``."""
        wanted = normalise_name(name)
        for tag_name, value in self.tags:
            if normalise_name(tag_name) == wanted:
                return value
        return None


#: The roles that are not communication operations: (member name, value, what it means).
_OTHER_ROLES_BEFORE = (("ACTION", "action"), ("ACTIVITY", "activity"))  # cost after `code`; a sub-activity
_OTHER_ROLES_AFTER = (
    ("PARALLEL", "parallel"),  # OpenMP-style parallel region over `threads`
    ("CRITICAL", "critical"),  # critical section `name`
    ("LOOP", "loop"),  # `iterations` or `while`
    ("PIPELINE", "pipeline"),  # children in order are the stages; `items`
    ("TASKPOOL", "taskpool"),  # `threads`, `items`
)

if TYPE_CHECKING:  # what type checkers see; the members at run time are those below

    class Role(str, Enum):  # noqa: UP042 - StrEnum would change str() of members
        """What an element means for performance, once the profile is interpreted."""

        ACTION = "action"
        ACTIVITY = "activity"
        SEND = "send"  # one member per operation of the runtime's table; the code names these two
        WAIT = "wait"
        PARALLEL = "parallel"
        CRITICAL = "critical"
        LOOP = "loop"
        PIPELINE = "pipeline"
        TASKPOOL = "taskpool"

else:
    #: What an element means for performance, once the profile is interpreted: an action, an
    #: activity, one role per communication operation of the runtime's table (``Role.ALLREDUCE``
    #: for ``allreduce``, in table order), and the thread patterns.  A ``str`` enum, as
    #: ``class Role(str, Enum)`` would be (``str()`` of a member is ``Role.SEND``).
    Role = Enum(
        "Role",
        [*_OTHER_ROLES_BEFORE, *((name.upper(), name) for name in OPERATIONS), *_OTHER_ROLES_AFTER],
        module=__name__,
        qualname="Role",
        type=str,
    )
    Role.__doc__ = "What an element means for performance, once the profile is interpreted."


#: The roles of communication operations: one per operation of the runtime's table.
COMMUNICATION_ROLES = frozenset(Role(name) for name in OPERATIONS)


@dataclass(frozen=True, slots=True)
class PerfSpec:
    """The interpreted performance annotation of one element.

    ``tags`` maps normalised tag names (``cost``, ``repeat``, ``code``, ``dest``,
    ``source``, ``size``, ``tag``, ``root``, ``threads``, ``name``, ``items``,
    ``iterations``, ``while``, ``probability``) to expression text in the
    expression language (README.md, "The performance profile in brief"); units
    are already converted to seconds and bytes.
    ``origin`` says where the annotation came from (``profile``, ``marte``,
    ``sidecar``, ``default``) so messages can point at the right file.
    """

    role: Role
    tags: tuple[tuple[str, str], ...] = ()
    origin: str = "profile"

    def get(self, name: str, default: str | None = None) -> str | None:
        for key, value in self.tags:
            if key == name:
                return value
        return default


_R = TypeVar("_R", bound="_Record")


class _Record:
    """Equality, hashing by xmi id, ``repr`` and ``replace`` for the records a reader makes by the thousand.

    A subclass lists its fields in ``FIELDS``, in constructor order.  Its
    ``location`` is built on first use from ``file`` and ``line``, unless the
    constructor was given one: most stages read only a node's line, and a
    20,000-action model would otherwise build 40,000 ``Location`` objects.
    """

    __slots__ = ("_location",)
    FIELDS: tuple[str, ...] = ()
    #: What ``replace`` passes on instead of a ``location`` that was never built.
    UNBUILT_LOCATION: tuple[str, ...] = ("line", "file")

    id: str
    name: str
    line: int | None
    file: str | None
    uml_type: str | None
    _location: Location | None

    @property
    def location(self) -> Location:
        """Where the element is written (built on first use)."""
        location = self._location
        if location is None:
            location = self._location = Location(
                self.file, self.line, self.id, self.name or None, self.uml_type
            )
        return location

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with ``changes`` (field names as in the constructor)."""
        values: dict[str, Any] = {name: getattr(self, name) for name in self.FIELDS if name != "location"}
        values["location"] = self._location
        values.update(changes)
        if values["location"] is None:
            values.update({name: getattr(self, name) for name in self.UNBUILT_LOCATION})
        return self.__class__(**values)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Record) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(getattr(self, "id"))  # noqa: B009 - every subclass has an id slot

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{self.__class__.__name__}({shown})"


class Edge(_Record):
    """A control or object flow between two nodes of the same region.

    ``guard`` is the guard text as written (``None`` when absent or the
    tool's default ``true``); ``else`` stays ``"else"``.  ``probability`` is an
    expression text for a seeded random choice at a decision.  ``stereotypes``
    are the raw applications; the profile reads ``probability`` from them.
    ``uml_type`` (``ControlFlow``, ``ObjectFlow``...) only names the flow in
    messages.
    """

    __slots__ = (
        "id",
        "source",
        "target",
        "name",
        "kind",
        "guard",
        "probability",
        "stereotypes",
        "line",
        "file",
        "uml_type",
    )
    FIELDS = ("id", "source", "target", "location", "name", "kind", "guard", "probability", "stereotypes")
    UNBUILT_LOCATION = ("line", "file", "uml_type")

    def __init__(
        self,
        id: str,
        source: str,
        target: str,
        location: Location | None = None,
        name: str = "",
        kind: str = "control",  # "control" or "object"
        guard: str | None = None,
        probability: str | None = None,
        stereotypes: tuple[StereotypeApplication, ...] = (),
        *,
        line: int | None = None,
        file: str | None = None,
        uml_type: str | None = None,
    ) -> None:
        self.id = id
        self.source = source
        self.target = target
        self.name = name
        self.kind = kind
        self.guard = guard
        self.probability = probability
        self.stereotypes = stereotypes
        self._location = location
        if location is not None:
            line, file, uml_type = location.line, location.file, location.uml_type
        self.line = line
        self.file = file
        self.uml_type = uml_type


#: One flow of a region as the reader found it, before its :class:`Edge` is built: its line, id,
#: source, target, metaclass, kind and name (no reference to the parsed document is kept).
FlowRow = tuple[int | None, str, str, str, str, str, str]


class Flows:
    """A region's flows as the reader found them, in file order: built :class:`Edge` records and rows.

    A large activity is mostly plain flows (no guard, no stereotype, no children), and
    the stages before the handler ask only where each one starts and ends: a row keeps
    what the reader read (the flow's line, id, source, target, metaclass, kind, name)
    and its :class:`Edge` is built only when ``Region.edges`` is asked for.  ``quiet`` is
    true when every flow is such a row (the profile then has nothing to interpret);
    ``named`` when some flow has a name (which may be a guard written as a name).
    """

    __slots__ = ("file", "named", "quiet", "rows")

    def __init__(self, rows: list[Edge | FlowRow], file: str | None, quiet: bool, named: bool = True) -> None:
        self.rows = rows
        self.file = file
        self.quiet = quiet
        self.named = named

    def __len__(self) -> int:
        return len(self.rows)

    def ends(self) -> Iterator[tuple[str, str]]:
        """``(source, target)`` of every flow, in file order, without building records."""
        for row in self.rows:
            if isinstance(row, Edge):
                yield row.source, row.target
            else:
                yield row[2], row[3]

    def names(self) -> Iterator[tuple[str, str]]:
        """``(source, name)`` of every flow, no records built."""
        for row in self.rows:
            if isinstance(row, Edge):
                yield row.source, row.name
            else:
                yield row[2], row[6]

    def build(self) -> tuple[Edge, ...]:
        """Every flow as its :class:`Edge` record."""
        file = self.file
        return tuple(
            row
            if isinstance(row, Edge)
            else Edge(
                row[1],
                row[2],
                row[3],
                None,
                row[6],
                row[5],
                line=row[0],
                file=file,
                uml_type=row[4],
            )
            for row in self.rows
        )


class Region:
    """Nodes and edges that form one flow graph (an activity or a structured node).

    A reader may give the flows as :class:`Flows` (``flows=``) instead of ``edges``:
    ``edges`` builds their records on first use, and :meth:`flow_ends` and
    :attr:`flows` let the stages that need no more (the profile when no flow carries
    anything to interpret, the straight-chain test of recovery) skip building them.
    Immutable, compared and hashed by its nodes and edges.
    """

    __slots__ = ("_edges", "_flows", "nodes")
    __match_args__ = ("nodes", "edges")

    nodes: tuple[Node, ...]
    _edges: tuple[Edge, ...] | None
    _flows: Flows | None

    def __init__(
        self, nodes: tuple[Node, ...] = (), edges: tuple[Edge, ...] = (), *, flows: Flows | None = None
    ) -> None:
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "_edges", None if flows is not None else edges)
        object.__setattr__(self, "_flows", flows)

    @property
    def edges(self) -> tuple[Edge, ...]:
        """The flows as :class:`Edge` records (built from the reader's rows on first use)."""
        edges = self._edges
        if edges is None:
            edges = self._flows.build()  # type: ignore[union-attr]
            object.__setattr__(self, "_edges", edges)
            object.__setattr__(self, "_flows", None)
        return edges

    @property
    def flows(self) -> Flows | None:
        """The reader's rows while no :class:`Edge` record has been built, else ``None``."""
        return self._flows

    def flow_ends(self) -> Iterator[tuple[str, str]]:
        """``(source, target)`` of every flow in file order (no records built)."""
        flows = self._flows
        if flows is not None:
            return flows.ends()
        return ((edge.source, edge.target) for edge in self.edges)

    def flow_count(self) -> int:
        flows = self._flows
        return len(flows) if flows is not None else len(self.edges)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Region is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Region is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Region:
            return NotImplemented
        return self.nodes == other.nodes and self.edges == other.edges  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.nodes, self.edges))

    def __repr__(self) -> str:
        return f"Region(nodes={self.nodes!r}, edges={self.edges!r})"

    def __reduce__(self) -> tuple[type[Region], tuple[tuple[Node, ...], tuple[Edge, ...]]]:
        return Region, (self.nodes, self.edges)

    def node(self, node_id: str) -> Node | None:
        for node in self.nodes:
            if node.id == node_id:
                return node
        return None


@dataclass(frozen=True, slots=True)
class LoopSpec:
    """The parts of a UML LoopNode, as ids of nodes in the loop's region."""

    setup: tuple[str, ...] = ()
    test: tuple[str, ...] = ()
    body: tuple[str, ...] = ()
    tested_first: bool = True
    decider: str | None = None  # text of the decider condition, when the tool gave one


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of a UML ConditionalNode."""

    test: tuple[str, ...] = ()
    body: tuple[str, ...] = ()
    guard: str | None = None  # a guard expression when the tool wrote one


class Node(_Record):
    """An activity node of any kind.

    ``behavior`` is the id of the activity a CALL node runs.  ``region`` is the
    nested flow of STRUCTURED, LOOP and CONDITIONAL nodes.  ``code`` is an
    OpaqueAction body written in ``python`` or ``uml2perf`` (other languages
    are kept in ``body_text`` for reports but never run).  ``line`` is the line
    the node is written on; ``location`` is built from it on first use.
    """

    __slots__ = (
        "id",
        "name",
        "kind",
        "uml_type",
        "stereotypes",
        "perf",
        "code",
        "body_text",
        "body_language",
        "behavior",
        "region",
        "loop",
        "clauses",
        "partition",
        "line",
        "file",
    )
    uml_type: str

    FIELDS = (
        "id",
        "name",
        "kind",
        "uml_type",
        "location",
        "stereotypes",
        "perf",
        "code",
        "body_text",
        "body_language",
        "behavior",
        "region",
        "loop",
        "clauses",
        "partition",
    )

    def __init__(
        self,
        id: str,
        name: str,
        kind: NodeKind,
        uml_type: str,
        location: Location | None = None,
        stereotypes: tuple[StereotypeApplication, ...] = (),
        perf: PerfSpec | None = None,
        code: str | None = None,
        body_text: str | None = None,
        body_language: str | None = None,
        behavior: str | None = None,
        region: Region | None = None,
        loop: LoopSpec | None = None,
        clauses: tuple[Clause, ...] = (),
        partition: str | None = None,
        *,
        line: int | None = None,
        file: str | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.kind = kind
        self.uml_type = uml_type
        self.stereotypes = stereotypes
        self.perf = perf
        self.code = code
        self.body_text = body_text
        self.body_language = body_language
        self.behavior = behavior
        self.region = region
        self.loop = loop
        self.clauses = clauses
        self.partition = partition
        self._location = location
        if location is not None:
            line, file = location.line, location.file
        self.line = line
        self.file = file


def plain_node(
    id: str,
    name: str,
    kind: NodeKind,
    uml_type: str,
    stereotypes: tuple[StereotypeApplication, ...],
    partition: str | None,
    line: int | None,
    file: str | None,
    _new: Any = object.__new__,
) -> Node:
    """``Node(id, name, kind, uml_type, None, stereotypes, partition=partition, line=line, file=file)``
    without the constructor's keyword handling: a reader builds one per plain node of a region
    (tens of thousands in a large activity), at less than half the constructor's cost."""
    node: Node = _new(Node)
    node.id = id
    node.name = name
    node.kind = kind
    node.uml_type = uml_type
    node.stereotypes = stereotypes
    node.perf = None
    node.code = None
    node.body_text = None
    node.body_language = None
    node.behavior = None
    node.region = None
    node.loop = None
    node.clauses = ()
    node.partition = partition
    node._location = None
    node.line = line
    node.file = file
    return node


@dataclass(frozen=True, slots=True)
class Variable:
    """A model variable: a global (activity attribute) or a local (UML Variable)."""

    name: str
    location: Location
    type_name: str | None = None
    default: str | None = None  # expression text, or None
    id: str | None = None
    #: True when the model declares the variable but gives it no value (a MARTE
    #: analysis-context parameter such as ``in$timeUpdate``): ``run`` needs one
    #: from ``--set NAME=VALUE`` or the sidecar's ``[variables]`` table.
    required: bool = False


@dataclass(frozen=True, slots=True)
class CostFunction:
    """A named cost function (OpaqueBehavior / FunctionBehavior) callable from expressions."""

    name: str
    parameters: tuple[str, ...]
    body: str  # an expression, or ``return <expression>``
    location: Location
    language: str | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Activity:
    """A UML activity (or UML 1.x ActivityGraph, or Umbrello activity diagram)."""

    id: str
    name: str
    location: Location
    region: Region = Region()
    attributes: tuple[Variable, ...] = ()  # globals when this is the main activity
    variables: tuple[Variable, ...] = ()  # locals
    stereotypes: tuple[StereotypeApplication, ...] = ()
    perf: PerfSpec | None = None
    is_main: bool = False  # stereotyped main / model+

    def walk(self) -> Iterator[Node]:
        """Every node of the activity, nested regions included, in file order."""
        return walk_region(self.region)


_REGION_OF = attrgetter("region")


def walk_region(region: Region) -> Iterator[Node]:
    """Every node of ``region``, nested regions included, in file order.

    A region without nested regions (most of a large activity) is walked by its tuple's own
    iterator: several stages walk every node, and a generator costs more per node than the
    check, which runs in C.
    """
    nodes = region.nodes
    if not any(map(_REGION_OF, nodes)):
        return iter(nodes)
    return _walk_nested(nodes)


def _walk_nested(nodes: tuple[Node, ...]) -> Iterator[Node]:
    for node in nodes:
        yield node
        if node.region is not None:
            yield from walk_region(node.region)


def runs_as_action(node: Node, activity_ids: frozenset[str] | set[str]) -> bool:
    """Whether ``node`` runs as an action: actions, and calls of behaviours the file does not hold.

    The one definition of what counts as an action, shared by the profile (which gives such
    nodes the default cost), ``check`` (which counts them and their costs) and ``run`` (which
    refuses a model where none has a cost).  ``activity_ids`` are the ids of the file's activities.
    """
    if node.kind is NodeKind.ACTION:
        return True
    return node.kind is NodeKind.CALL and node.behavior not in activity_ids


@dataclass(frozen=True, slots=True)
class ElementAnnotations:
    """Stereotype applications on an element that is neither an activity, a node nor a flow.

    The model itself, its packages and classes can carry annotations that
    matter to every activity (a MARTE ``GaAnalysisContext`` on the model
    declares the parameters of the analysis); the reader keeps them here so
    the profile can interpret them without knowing XMI.
    """

    element_id: str
    metaclass: str
    name: str
    location: Location
    stereotypes: tuple[StereotypeApplication, ...] = ()


@dataclass(frozen=True, slots=True)
class Model:
    """A whole input file, read into the neutral form.

    ``contents`` counts what else the file holds (classes, state machines, use
    cases...) so a file with no activity gets a message naming its contents.
    ``diagnostics`` holds what the reader skipped or doubted; ``check`` prints it.
    """

    source: str
    dialect: str
    name: str = ""
    activities: tuple[Activity, ...] = ()
    functions: tuple[CostFunction, ...] = ()
    globals: tuple[Variable, ...] = ()  # from a class named or stereotyped `globals`
    contents: tuple[tuple[str, int], ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    annotations: tuple[ElementAnnotations, ...] = ()  # stereotypes of the model, packages, classes

    def activity(self, key: str) -> Activity | None:
        """Find an activity by id or by name."""
        for activity in self.activities:
            if activity.id == key:
                return activity
        for activity in self.activities:
            if activity.name == key:
                return activity
        return None


# --------------------------------------------------------------------------- contents and code fragments

#: What ``Model.contents`` reports, in this order, with singular and plural labels.
CONTENT_LABELS: dict[str, tuple[str, str]] = {
    "Activity": ("activity", "activities"),
    "Class": ("class", "classes"),
    "Interface": ("interface", "interfaces"),
    "Enumeration": ("enumeration", "enumerations"),
    "DataType": ("data type", "data types"),
    "Signal": ("signal", "signals"),
    "Component": ("component", "components"),
    "Package": ("package", "packages"),
    "UseCase": ("use case", "use cases"),
    "Actor": ("actor", "actors"),
    "StateMachine": ("state machine", "state machines"),
    "Interaction": ("interaction", "interactions"),
    "OpaqueBehavior": ("opaque behavior", "opaque behaviors"),
    "FunctionBehavior": ("function behavior", "function behaviors"),
    "Collaboration": ("collaboration", "collaborations"),
    "Association": ("association", "associations"),
    "Dependency": ("dependency", "dependencies"),
    "Abstraction": ("abstraction", "abstractions"),
    "InstanceSpecification": ("instance", "instances"),
    "Node": ("deployment node", "deployment nodes"),
    "Device": ("device", "devices"),
    "ExecutionEnvironment": ("execution environment", "execution environments"),
    "Artifact": ("artifact", "artifacts"),
}
#: Label used in ``Model.contents`` for stereotype applications.
STEREOTYPE_LABEL = "stereotype applications"


def plural(count: int, singular: str, plural_form: str) -> str:
    return f"{count} {singular if count == 1 else plural_form}"


def describe_contents(contents: Iterable[tuple[str, int]]) -> str:
    """``12 classes, 2 state machines`` from ``Model.contents``; ``nothing UML`` when empty."""
    singulars = {plural_form: singular for singular, plural_form in CONTENT_LABELS.values()}
    singulars[STEREOTYPE_LABEL] = "stereotype application"
    parts = [plural(n, singulars.get(label, label), label) for label, n in contents if n]
    return ", ".join(parts) if parts else "no UML elements at all"


_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*\s*(?:[-+*/%]|//|\*\*)?=(?!=)\s*[^;{}]+$")


def plain_assignments(text: str) -> str | None:
    """The statements of a C-style body made only of ``name = expr;`` lines, else ``None``.

    Performance Prophet stored code fragments as C++ (``GV = 1; P = 3.14;``).
    Such bodies are accepted as code fragments, one assignment per line; any
    body with braces, calls as statements, declarations or comments is not.
    """
    statements = [part.strip() for chunk in text.splitlines() for part in chunk.split(";")]
    statements = [s for s in statements if s]
    if not statements or not all(_ASSIGNMENT.match(s) for s in statements):
        return None
    return "\n".join(statements)
