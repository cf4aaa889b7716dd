"""Build neutral :class:`~uml2perf.model.Model` objects in code, for behaviour tests.

XMI files are for reader tests; everything else is easier to read and to vary
when the model is written as Python::

    b = ModelBuilder("prophet")
    b.global_var("GV", "0", type_name="Integer")
    b.function("FA1", "121 / P")
    main = b.activity("MainActivity", main=True)
    a1 = main.action("A1", cost="FA1()", code="GV = 1")
    a2 = main.action("A2", cost="212")
    main.chain(main.initial(), a1, a2, main.final())
    model = b.build()

Node methods return the new node's id (a plain string) so that flows are
written with ``flow(a, b)`` or ``chain(a, b, c)``.  Ids, lines and names are
deterministic (``_n1``, ``_e1``... in creation order), so generated code built
from these models can be compared byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from uml2perf.errors import Location
from uml2perf.model import (
    Activity,
    Clause,
    CostFunction,
    Edge,
    LoopSpec,
    Model,
    Node,
    NodeKind,
    PerfSpec,
    Region,
    Role,
    StereotypeApplication,
    Variable,
)

_UML_TYPES = {
    NodeKind.ACTION: "OpaqueAction",
    NodeKind.CALL: "CallBehaviorAction",
    NodeKind.STRUCTURED: "StructuredActivityNode",
    NodeKind.LOOP: "LoopNode",
    NodeKind.CONDITIONAL: "ConditionalNode",
    NodeKind.INITIAL: "InitialNode",
    NodeKind.ACTIVITY_FINAL: "ActivityFinalNode",
    NodeKind.FLOW_FINAL: "FlowFinalNode",
    NodeKind.DECISION: "DecisionNode",
    NodeKind.MERGE: "MergeNode",
    NodeKind.FORK: "ForkNode",
    NodeKind.JOIN: "JoinNode",
    NodeKind.OBJECT: "CentralBufferNode",
}


def _perf(role: Role | str | None, tags: dict[str, Any]) -> PerfSpec | None:
    clean = tuple((k, str(v)) for k, v in tags.items() if v is not None)
    if role is None:
        if not clean:
            return None
        role = Role.ACTION
    return PerfSpec(Role(role), clean)


class _Ids:
    """Deterministic ids and line numbers shared by one model."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.count = 0

    def next(self, prefix: str) -> tuple[str, int]:
        self.count += 1
        return f"_{prefix}{self.count}", self.count + 10

    def location(self, ident: str, line: int, name: str, uml_type: str) -> Location:
        return Location(self.source, line, ident, name or None, uml_type)


@dataclass
class _NodeDraft:
    id: str
    name: str
    kind: NodeKind
    uml_type: str
    line: int
    perf: PerfSpec | None = None
    code: str | None = None
    behavior: str | None = None
    region: RegionBuilder | None = None
    loop: LoopSpec | None = None
    clauses: tuple[Clause, ...] = ()
    stereotypes: tuple[StereotypeApplication, ...] = ()


class RegionBuilder:
    """Nodes and flows of one region (an activity or the inside of a structured node)."""

    def __init__(self, ids: _Ids) -> None:
        self._ids = ids
        self._nodes: list[_NodeDraft] = []
        self._edges: list[Edge] = []

    # -- nodes ---------------------------------------------------------------

    def node(
        self,
        kind: NodeKind,
        name: str = "",
        *,
        role: Role | str | None = None,
        code: str | None = None,
        behavior: str | None = None,
        id: str | None = None,
        uml_type: str | None = None,
        **tags: Any,
    ) -> str:
        """Add any node; tags become its :class:`PerfSpec` (``role`` defaults to action)."""
        ident, line = self._ids.next("n")
        draft = _NodeDraft(
            id or ident,
            name,
            kind,
            uml_type or _UML_TYPES[kind],
            line,
            _perf(role, tags),
            code,
            behavior,
        )
        self._nodes.append(draft)
        return draft.id

    def initial(self, name: str = "") -> str:
        return self.node(NodeKind.INITIAL, name)

    def final(self, name: str = "") -> str:
        return self.node(NodeKind.ACTIVITY_FINAL, name)

    def flow_final(self, name: str = "") -> str:
        return self.node(NodeKind.FLOW_FINAL, name)

    def decision(self, name: str = "") -> str:
        return self.node(NodeKind.DECISION, name)

    def merge(self, name: str = "") -> str:
        return self.node(NodeKind.MERGE, name)

    def fork(self, name: str = "") -> str:
        return self.node(NodeKind.FORK, name)

    def join(self, name: str = "") -> str:
        return self.node(NodeKind.JOIN, name)

    def object(self, name: str = "") -> str:
        return self.node(NodeKind.OBJECT, name)

    def action(
        self,
        name: str,
        cost: Any = None,
        *,
        code: str | None = None,
        repeat: Any = None,
        role: Role | str | None = None,
        **tags: Any,
    ) -> str:
        """An action; ``cost``/``repeat``/other tags go into an ``action+`` spec."""
        if role is None and (cost is not None or repeat is not None or tags):
            role = Role.ACTION
        return self.node(NodeKind.ACTION, name, role=role, code=code, cost=cost, repeat=repeat, **tags)

    def actions(self, *names: str, cost: Any = None) -> list[str]:
        """Several actions with the same cost (flows are not added: use :meth:`chain`)."""
        return [self.action(n, cost) for n in names]

    def comm(self, name: str, role: Role | str, **tags: Any) -> str:
        """A communication action (``send``, ``recv``, ``barrier``, ``allreduce``...)."""
        return self.node(NodeKind.ACTION, name, role=role, **tags)

    def call(self, name: str, activity: str, *, role: Role | str | None = None, **tags: Any) -> str:
        """A CallBehaviorAction running ``activity`` (an activity id from :meth:`ModelBuilder.activity`)."""
        if role is None and tags:
            role = Role.ACTIVITY
        return self.node(NodeKind.CALL, name, role=role, behavior=activity, **tags)

    def structured(self, name: str, *, role: Role | str | None = None, **tags: Any) -> RegionBuilder:
        """A structured node; returns the builder of its nested region (``.id`` is the node id)."""
        ident = self.node(NodeKind.STRUCTURED, name, role=role, **tags)
        inner = RegionBuilder(self._ids)
        inner.id = ident  # type: ignore[attr-defined]
        self._draft(ident).region = inner
        return inner

    def loop_node(
        self,
        name: str,
        *,
        decider: str | None = None,
        tested_first: bool = True,
        role: Role | str | None = None,
        **tags: Any,
    ) -> LoopNodeBuilder:
        """A UML LoopNode; fill ``.setup``, ``.test`` and ``.body`` with node ids of its region."""
        ident = self.node(NodeKind.LOOP, name, role=role, **tags)
        inner = LoopNodeBuilder(self._ids, ident, decider, tested_first)
        self._draft(ident).region = inner
        return inner

    def conditional(self, name: str) -> ConditionalBuilder:
        """A UML ConditionalNode; add clauses with :meth:`ConditionalBuilder.clause`."""
        ident = self.node(NodeKind.CONDITIONAL, name)
        inner = ConditionalBuilder(self._ids, ident)
        self._draft(ident).region = inner
        return inner

    # -- flows ---------------------------------------------------------------

    def flow(
        self,
        source: str,
        target: str,
        *,
        guard: str | None = None,
        probability: Any = None,
        kind: str = "control",
        name: str = "",
    ) -> str:
        """Add one flow; returns its id."""
        ident, line = self._ids.next("e")
        location = self._ids.location(ident, line, name, "ObjectFlow" if kind == "object" else "ControlFlow")
        self._edges.append(
            Edge(
                ident,
                source,
                target,
                location,
                name,
                kind,
                guard,
                None if probability is None else str(probability),
            )
        )
        return ident

    def chain(self, *nodes: str) -> None:
        """Unguarded flows ``a → b → c …``."""
        for source, target in zip(nodes, nodes[1:], strict=False):
            self.flow(source, target)

    def sequence(self, *names: str, cost: Any = 1) -> list[str]:
        """initial → actions named ``names`` → final, all flows added; returns the action ids."""
        ids = self.actions(*names, cost=cost)
        self.chain(self.initial(), *ids, self.final())
        return ids

    # -- build ---------------------------------------------------------------

    def _draft(self, ident: str) -> _NodeDraft:
        for draft in self._nodes:
            if draft.id == ident:
                return draft
        raise KeyError(ident)

    def build_region(self) -> Region:
        nodes = []
        for d in self._nodes:
            loop = d.region.loop_spec() if isinstance(d.region, LoopNodeBuilder) else None
            clauses = d.region.clause_specs() if isinstance(d.region, ConditionalBuilder) else ()
            nodes.append(
                Node(
                    d.id,
                    d.name,
                    d.kind,
                    d.uml_type,
                    self._ids.location(d.id, d.line, d.name, d.uml_type),
                    stereotypes=d.stereotypes,
                    perf=d.perf,
                    code=d.code,
                    behavior=d.behavior,
                    region=d.region.build_region() if d.region is not None else None,
                    loop=loop,
                    clauses=clauses,
                )
            )
        return Region(tuple(nodes), tuple(self._edges))


class LoopNodeBuilder(RegionBuilder):
    """The region of a LoopNode plus its sections (lists of node ids)."""

    def __init__(self, ids: _Ids, ident: str, decider: str | None, tested_first: bool) -> None:
        super().__init__(ids)
        self.id = ident
        self.decider = decider
        self.tested_first = tested_first
        self.setup: list[str] = []
        self.test: list[str] = []
        self.body: list[str] = []

    def loop_spec(self) -> LoopSpec:
        return LoopSpec(
            tuple(self.setup), tuple(self.test), tuple(self.body), self.tested_first, self.decider
        )


class ConditionalBuilder(RegionBuilder):
    """The region of a ConditionalNode plus its clauses."""

    def __init__(self, ids: _Ids, ident: str) -> None:
        super().__init__(ids)
        self.id = ident
        self._clauses: list[Clause] = []

    def clause(self, guard: str | None, *body: str, test: tuple[str, ...] = ()) -> None:
        """A clause: ``guard`` (None for the default clause) and the ids of its body nodes."""
        self._clauses.append(Clause(tuple(test), tuple(body), guard))

    def clause_specs(self) -> tuple[Clause, ...]:
        return tuple(self._clauses)


class ActivityBuilder(RegionBuilder):
    """An activity: a region plus locals and attributes."""

    def __init__(
        self,
        ids: _Ids,
        name: str,
        main: bool,
        perf: PerfSpec | None,
        ident: str | None = None,
    ) -> None:
        super().__init__(ids)
        generated, self.line = ids.next("a")
        self.id = ident or generated
        self.name = name
        self.main = main
        self.perf = perf
        self.locals: list[Variable] = []
        self.attributes: list[Variable] = []

    def local(self, name: str, default: Any = None, *, type_name: str | None = None) -> None:
        ident, line = self._ids.next("v")
        self.locals.append(
            Variable(
                name,
                self._ids.location(ident, line, name, "Variable"),
                type_name,
                None if default is None else str(default),
                ident,
            )
        )

    def attribute(self, name: str, default: Any = None, *, type_name: str | None = None) -> None:
        ident, line = self._ids.next("v")
        self.attributes.append(
            Variable(
                name,
                self._ids.location(ident, line, name, "Property"),
                type_name,
                None if default is None else str(default),
                ident,
            )
        )

    def build(self) -> Activity:
        return Activity(
            self.id,
            self.name,
            self._ids.location(self.id, self.line, self.name, "Activity"),
            self.build_region(),
            tuple(self.attributes),
            tuple(self.locals),
            perf=self.perf,
            is_main=self.main,
        )


@dataclass
class ModelBuilder:
    """A whole model: activities, globals and cost functions."""

    name: str = "model"
    source: str = "model.uml"
    dialect: str = "builder"
    _activities: list[ActivityBuilder] = field(default_factory=list)
    _functions: list[CostFunction] = field(default_factory=list)
    _globals: list[Variable] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = _Ids(self.source)

    def activity(
        self,
        name: str,
        *,
        main: bool = False,
        repeat: Any = None,
        id: str | None = None,
    ) -> ActivityBuilder:
        perf = PerfSpec(Role.ACTIVITY, (("repeat", str(repeat)),)) if repeat is not None else None
        builder = ActivityBuilder(self._ids, name, main, perf, id)
        self._activities.append(builder)
        return builder

    def global_var(self, name: str, default: Any = None, *, type_name: str | None = None) -> None:
        """A global variable (as if declared on a class stereotyped ``globals``)."""
        ident, line = self._ids.next("v")
        self._globals.append(
            Variable(
                name,
                self._ids.location(ident, line, name, "Property"),
                type_name,
                None if default is None else str(default),
                ident,
            )
        )

    def function(self, name: str, body: str, params: tuple[str, ...] = ()) -> str:
        """A named cost function ``name(params) = body``; returns its id."""
        ident, line = self._ids.next("f")
        self._functions.append(
            CostFunction(
                name,
                tuple(params),
                body,
                self._ids.location(ident, line, name, "OpaqueBehavior"),
                "python",
                ident,
            )
        )
        return ident

    def build(self) -> Model:
        return Model(
            source=self.source,
            dialect=self.dialect,
            name=self.name,
            activities=tuple(a.build() for a in self._activities),
            functions=tuple(self._functions),
            globals=tuple(self._globals),
        )


def sequence_model(*costs: float, name: str = "seq") -> Model:
    """The smallest useful model: one main activity running actions A1..An in order."""
    b = ModelBuilder(name, source=f"{name}.uml")
    main = b.activity("main", main=True)
    ids = [main.action(f"A{i + 1}", cost) for i, cost in enumerate(costs)]
    main.chain(main.initial(), *ids, main.final())
    return b.build()
