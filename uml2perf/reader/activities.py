"""Activities of a UML 2 file: regions of nodes and flows, loop and conditional nodes, variables, functions.

:class:`ActivityReading` reads each activity once, from its own subtree:
nodes first (pins are read as part of their actions), then flows, whose ends
are mapped to nodes of the same region.  LoopNode and ConditionalNode tests
are read for what they compute: the test action owning a ``decider`` pin (an
OpaqueAction whose python/uml2perf body ends with an expression, or a
ValueSpecificationAction) gives ``LoopSpec.decider`` or ``Clause.guard``;
clauses come in ``predecessorClause`` order.  How these become loops and
choices is control-flow recovery's business (:mod:`uml2perf.navigation`).

Tool dialects override the hooks (``node_kind``, ``edge_kind``,
``outside_endpoint``, ``adjust_edges``) rather than adding special cases here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from lxml import etree

from ..errors import Diagnostic, Severity
from ..model import (
    Activity,
    Clause,
    CostFunction,
    Edge,
    FlowRow,
    Flows,
    LoopSpec,
    Node,
    NodeKind,
    Region,
    Variable,
    plain_assignments,
    plain_node,
)
from .stereotypes import StereotypeReading
from .xmi import ASSIGNMENT_LANGUAGES, CODE_LANGUAGES, FUNCTION_LANGUAGES
from .xml import XmiDocument

_T = TypeVar("_T")

CONTROL_NODE_KINDS: dict[str, NodeKind] = {
    "InitialNode": NodeKind.INITIAL,
    "ActivityFinalNode": NodeKind.ACTIVITY_FINAL,
    "FlowFinalNode": NodeKind.FLOW_FINAL,
    "DecisionNode": NodeKind.DECISION,
    "MergeNode": NodeKind.MERGE,
    "ForkNode": NodeKind.FORK,
    "JoinNode": NodeKind.JOIN,
}
OBJECT_NODE_TYPES = frozenset(
    {
        "ActivityParameterNode",
        "CentralBufferNode",
        "DataStoreNode",
        "ExpansionNode",
        "ObjectNode",
    }
)
STRUCTURED_TYPES = frozenset({"StructuredActivityNode", "ExpansionRegion", "SequenceNode"})
PIN_TYPES = frozenset({"InputPin", "OutputPin", "ValuePin", "ActionInputPin", "Pin"})
#: Features under which UML 2 actions own pins; EMF omits ``xmi:type`` when the
#: pin has the feature's declared type, so the tag alone must identify them.
PIN_FEATURES = frozenset(
    {
        "input",
        "output",
        "argument",
        "result",
        "structuredNodeInput",
        "structuredNodeOutput",
        "loopVariableInput",
        "loopVariable",
        "inputValue",
        "object",
        "target",
        "first",
        "second",
        "insertAt",
        "removeAt",
        "request",
        "collection",
        "replyValue",
        "returnInformation",
        "exception",
        "replacement",
        "unmarshallResult",
    }
)
NODE_FEATURES = frozenset({"node", "ownedNode", "structuredNode", "containedNode"})
#: Features under which an activity owns its partitions and other groups.
_GROUP_FEATURES = ("group", "partition", "ownedGroup")
EDGE_FEATURES = frozenset({"edge", "ownedEdge", "containedEdge"})


def _kind_of_metaclass(metaclass: str) -> NodeKind | None:
    """The neutral kind of a UML 2 activity node metaclass, ``None`` for pins and non-nodes."""
    kind = CONTROL_NODE_KINDS.get(metaclass)
    if kind is not None:
        return kind
    if metaclass in PIN_TYPES:
        return None
    if metaclass in OBJECT_NODE_TYPES:
        return NodeKind.OBJECT
    if metaclass == "CallBehaviorAction":
        return NodeKind.CALL
    if metaclass in STRUCTURED_TYPES:
        return NodeKind.STRUCTURED
    if metaclass == "LoopNode":
        return NodeKind.LOOP
    if metaclass == "ConditionalNode":
        return NodeKind.CONDITIONAL
    if metaclass.endswith("Action") or metaclass == "Action":
        return NodeKind.ACTION
    return None


#: Kinds of the nodes :meth:`ActivityReading.read_region` reads in its loop when they have no children.
PLAIN_KINDS = frozenset(
    {
        NodeKind.ACTION,
        NodeKind.OBJECT,
        NodeKind.INITIAL,
        NodeKind.ACTIVITY_FINAL,
        NodeKind.FLOW_FINAL,
        NodeKind.DECISION,
        NodeKind.MERGE,
        NodeKind.FORK,
        NodeKind.JOIN,
    }
)


class TypeTable(dict[str, _T | None]):
    """``xmi:type`` as written -> what ``classify`` makes of it, classified on first sight.

    A file names a handful of types thousands of times; the table asks
    ``classify`` once per distinct type of the file being read.
    """

    def __init__(self, classify: Callable[[str], _T | None]) -> None:
        super().__init__()
        self.classify = classify

    def __missing__(self, typed: str) -> _T | None:
        value = self[typed] = self.classify(typed)
        return value


#: ``=`` that assigns (``x = 1``, ``x += 1``, ``x := 1``), not one of ``==``, ``<=``, ``>=``, ``!=``.
_ASSIGNS = re.compile(r"(?<![=<>!])=(?!=)")


def split_condition(body: str) -> tuple[str | None, str] | None:
    """``(code, condition)`` of a test body whose last statement is an expression, else ``None``.

    The body of a loop or clause test written in python/uml2perf computes the
    condition: ``i < n`` alone, or assignments followed by it
    (``i = i + 1; i < n``, also on separate lines; a C-style ``return i < n;``
    is accepted).  The assignments stay the action's code fragment; the
    final expression becomes the condition.  A body that only assigns, or
    whose last line is inside an ``if`` block, is a plain code fragment.
    """
    lines = [line.rstrip() for line in body.strip().splitlines() if line.strip()]
    if not lines or lines[-1][:1].isspace():
        return None
    statements = [part.strip() for part in lines[-1].split(";") if part.strip()]
    if not statements:
        return None
    condition = statements[-1]
    if condition.startswith(("return ", "return(")):
        condition = condition[len("return") :].strip()
    if (
        not condition
        or condition.endswith(":")
        or _ASSIGNS.search(condition)
        or condition in ("pass", "return")
    ):
        return None
    code_lines = lines[:-1] + statements[:-1]
    return ("\n".join(code_lines) if code_lines else None), condition


class RegionState:
    """The region being built: its container id, nodes so far and their ids.

    A plain class, not a dataclass: making a dataclass runs generated code at import (about
    0.25 ms), and every ``convert`` imports this module.
    """

    __slots__ = ("container", "ids", "nodes", "parent")

    def __init__(
        self,
        container: str,
        nodes: list[Node] | None = None,
        ids: set[str] | None = None,
        parent: RegionState | None = None,
    ) -> None:
        self.container = container
        self.nodes: list[Node] = [] if nodes is None else nodes
        self.ids: set[str] = set() if ids is None else ids
        self.parent = parent

    def add(self, node: Node) -> None:
        self.nodes.append(node)
        self.ids.add(node.id)


class ActivityReading(StereotypeReading):
    """Reads activities, cost functions and globals of a UML 2 document."""

    #: Metaclasses whose node kind a dialect's :meth:`node_kind` decides from the element itself.
    ELEMENT_KINDS: frozenset[str] = frozenset()
    #: Metaclasses whose flow kind a dialect's :meth:`edge_kind` decides from the element itself
    #: (it is also asked for every flow with children).
    ELEMENT_EDGE_KINDS: frozenset[str] = frozenset()

    def __init__(self, doc: XmiDocument):
        super().__init__(doc)
        #: ``xmi:type`` as written -> what :meth:`plain_node_type` / :meth:`plain_edge_type` said
        self.plain_node_types = TypeTable(self.plain_node_type)
        self.plain_edge_types = TypeTable(self.plain_edge_type)
        self.partition_names: dict[str, str] = {}
        self.pin_owner: dict[str, str] = {}
        self.region_of: dict[str, str] = {}  # node id -> container id
        self.parent_region: dict[str, str | None] = {}  # container id -> its own container
        self.partition_of: dict[str, str] = {}

    # ------------------------------------------------------------------ hooks

    def adjust_edges(self, container: str, edges: list[etree._Element]) -> list[etree._Element]:
        """The edge elements of a region; Visual Paradigm moves some between activities."""
        return edges

    def outside_endpoint(self, element: etree._Element, ref: str, region: RegionState) -> str | None:
        """An edge end that exists in the file but not in the region being read.

        Return the id of a node of ``region`` that stands for it (creating it
        if needed), or ``None`` to drop the edge with a diagnostic.  Tools
        that keep nodes outside their activity override this.
        """
        return None

    def node_kind(self, element: etree._Element, metaclass: str) -> NodeKind | None:
        """The neutral kind of an activity node, ``None`` for pins and non-nodes.

        A dialect that decides the kind of some metaclass from the element
        itself lists that metaclass in :data:`ELEMENT_KINDS`; every other kind
        follows from the metaclass alone.
        """
        return _kind_of_metaclass(metaclass)

    # ------------------------------------------------------------------ activities

    def read_activity(self, element: etree._Element) -> Activity:
        aid = self.eid(element) or f"activity@{element.sourceline}"
        name = self.name_of(element)
        # one walk over the activity's children (tens of thousands in a large one) for all three features
        attributes: list[etree._Element] = []
        variables: list[etree._Element] = []
        groups: list[etree._Element] = []
        for child in element.iterchildren("ownedAttribute", "variable", *_GROUP_FEATURES):
            tag = child.tag
            if tag == "ownedAttribute":
                attributes.append(child)
            elif tag == "variable":
                variables.append(child)
            else:
                groups.append(child)
        self.read_partitions(element, groups)
        state = RegionState(aid)
        self.parent_region[aid] = None
        region = self.read_region(element, state)
        return Activity(
            id=aid,
            name=name,
            location=self.location(element, name, "Activity"),
            region=region,
            attributes=tuple(self.read_variable(a) for a in attributes),
            variables=tuple(self.read_variable(v) for v in variables),
            stereotypes=self.stereotypes_of(aid),
        )

    def read_partitions(self, activity: etree._Element, groups: list[etree._Element] | None = None) -> None:
        """Map node ids to partition names, from ``group``/``partition`` and their ``node`` lists.

        ``groups``: the activity's children under those features, when the caller has them.
        """
        stack = list(activity.iterchildren(*_GROUP_FEATURES)) if groups is None else groups
        while stack:
            group = stack.pop()
            metaclass = self.metaclass(group)
            if metaclass == "InterruptibleActivityRegion":
                self.diag(
                    Severity.INFO,
                    "interruptible region read as plain flow: its interrupting edges are ordinary flows here",
                    group,
                    code="interruptible-region",
                )
                continue
            if metaclass != "ActivityPartition" and group.tag != "partition":
                continue
            name = self.name_of(group)
            group_id = self.eid(group)
            if group_id is not None:
                self.partition_names[group_id] = name
            for node_id in self.refs(group, "node") + self.refs(group, "containedNode"):
                self.partition_of.setdefault(node_id, name)
            stack.extend(group.iterchildren("subpartition", "group"))

    def read_region(self, container: etree._Element, state: RegionState) -> Region:
        """The nodes and flows ``container`` owns, in file order; flows are read once every node is known.

        One pass over the node children reads the nodes; the flow children are
        read after it (tools write them before or after the nodes).  lxml picks
        either kind out in C, so the other children (attributes, comments,
        groups) cost nothing here.  A childless
        element whose ``xmi:type`` needs nothing beyond its attributes (the
        bulk of any large activity: actions, control nodes, plain control
        flows) is read right in the loop; anything else goes through
        :meth:`read_node` / :meth:`read_edge`, which handle every case.
        """
        # attribute names as UTF-8 bytes: lxml encodes a str name on every call, and this loop asks
        # five to seven attributes of each of an activity's nodes and flows (same values, about 5%
        # less per call)
        k_id, k_type = self.k_id.encode(), self.k_type.encode()
        node_types, edge_types = self.plain_node_types, self.plain_edge_types
        stereotypes, used = self.stereotypes, self.used_bases
        region_of, partition_of, pin_owner = self.region_of, self.partition_of, self.pin_owner
        container_id, file = state.container, self.file
        nodes, ids = state.nodes, state.ids
        # lxml picks the node children out in C, in file order (an activity has thousands of children)
        for child in container.iterchildren(*NODE_FEATURES):
            get = child.get
            nid = get(k_id)
            if nid is None:  # without an id: a reference (partition membership), not a definition
                continue
            typed = get(k_type)
            plain = node_types[typed] if typed is not None else None
            if (
                plain is None
                or len(child)
                or (plain[0] == "OpaqueAction" and get(b"body") is not None)
                or get(b"inPartition") is not None
            ):
                node = self.read_node(child, state, nid)
                if node is not None:
                    state.add(node)
                continue
            metaclass, kind = plain
            region_of[nid] = container_id
            applied = stereotypes.get(nid, ())
            if applied:
                used.add(nid)
            nodes.append(
                plain_node(
                    nid,
                    get(b"name") or "",
                    kind,
                    metaclass,
                    applied,
                    partition_of.get(nid) if partition_of else None,
                    child.sourceline,
                    file,
                )
            )
            ids.add(nid)
        edge_elements: Iterable[etree._Element]
        if type(self).adjust_edges is ActivityReading.adjust_edges:
            edge_elements = container.iterchildren(*EDGE_FEATURES)  # read once, as lxml walks them
        else:
            edge_elements = self.adjust_edges(
                container_id,
                [child for child in container.iterchildren(*EDGE_FEATURES) if child.get(k_id) is not None],
            )
        # plain flows stay rows until someone asks for their records (see model.Flows)
        rows: list[Edge | FlowRow] = []
        quiet = True
        named = False
        for element in edge_elements:
            get = element.get
            eid = get(k_id)
            if eid is None:  # a reference to a flow, not its definition
                continue
            typed = get(k_type)
            plain_edge = edge_types[typed] if typed is not None else None
            source, target = get(b"source"), get(b"target")
            if (
                plain_edge is not None
                and source
                and target
                and not len(element)
                and get(b"guard") is None
                and " " not in source
                and " " not in target
            ):
                if pin_owner:
                    source, target = pin_owner.get(source, source), pin_owner.get(target, target)
                if source in ids and target in ids and source != target:
                    applied = stereotypes.get(eid, ())
                    metaclass, edge_kind = plain_edge
                    if not applied:
                        name = get(b"name") or ""
                        if name:
                            named = True
                        rows.append((element.sourceline, eid, source, target, metaclass, edge_kind, name))
                        continue
                    used.add(eid)
                    quiet = False
                    rows.append(
                        Edge(
                            eid,
                            source,
                            target,
                            None,
                            get(b"name") or "",
                            edge_kind,
                            None,
                            None,
                            applied,
                            line=element.sourceline,
                            file=file,
                            uml_type=metaclass,
                        )
                    )
                    continue
            edge = self.read_edge(element, state)
            if edge is not None:
                quiet = False
                rows.append(edge)
        return Region(tuple(nodes), flows=Flows(rows, file, quiet, named or not quiet))

    def plain_node_type(self, typed: str) -> tuple[str, NodeKind] | None:
        """``(metaclass, kind)`` for nodes of this ``xmi:type`` that :meth:`read_region` reads in its
        loop, ``None`` for the types :meth:`read_node` must read (calls, nested regions, pins, the
        unknown, and the dialect's :data:`ELEMENT_KINDS`).
        """
        metaclass = typed.rpartition(":")[2]
        if metaclass in self.ELEMENT_KINDS:
            return None
        kind = _kind_of_metaclass(metaclass)
        return (metaclass, kind) if kind in PLAIN_KINDS else None

    def plain_edge_type(self, typed: str) -> tuple[str, str] | None:
        """``(metaclass, edge kind)`` for childless flows of this ``xmi:type`` read in the loop of
        :meth:`read_region`; ``None`` for the dialect's :data:`ELEMENT_EDGE_KINDS`.
        """
        metaclass = typed.rpartition(":")[2]
        if metaclass in self.ELEMENT_EDGE_KINDS:
            return None
        return metaclass, ("object" if metaclass == "ObjectFlow" else "control")

    def read_node(self, element: etree._Element, state: RegionState, nid: str | None = None) -> Node | None:
        """One activity node (``nid``: its xmi:id when the caller has it)."""
        get = element.get
        if nid is None:
            nid = get(self.k_id) or ""
        metaclass = self.metaclass(element)
        kind = self.node_kind(element, metaclass)
        if kind is None:
            if metaclass in PIN_TYPES:
                return None
            self.diag(
                Severity.WARNING,
                f"unknown activity node type {metaclass!r} read as a plain action",
                element,
                code="unknown-node",
            )
            kind = NodeKind.ACTION
        has_children = len(element) > 0
        name = get("name")
        if name is None:
            name = self.name_of(element) if has_children else ""
        self.region_of[nid] = state.container
        if has_children:
            self.register_pins(element, nid)
        behavior = region = loop = None
        clauses: tuple[Clause, ...] = ()
        code = body_text = body_language = None
        if kind is NodeKind.ACTION:
            if metaclass == "OpaqueAction" and (has_children or get("body") is not None):
                code, body_text, body_language = self.read_action_body(element)
        elif kind is NodeKind.CALL:
            behavior = self.ref(element, "behavior")
        elif kind is NodeKind.STRUCTURED or kind is NodeKind.LOOP or kind is NodeKind.CONDITIONAL:
            self.parent_region[nid] = state.container
            region = self.read_region(element, RegionState(nid, parent=state))
            if kind is NodeKind.LOOP:
                loop, region = self.read_loop(element, region)
            elif kind is NodeKind.CONDITIONAL:
                clauses, region = self.read_clauses(element, region)
        partition = self.partition_of.get(nid)
        if partition is None and (has_children or get("inPartition") is not None):
            partition = self.partition_named(element)
        return Node(
            nid,
            name,
            kind,
            metaclass,
            None,
            self.stereotypes_of(nid),
            None,
            code,
            body_text,
            body_language,
            behavior,
            region,
            loop,
            clauses,
            partition,
            line=element.sourceline,
            file=self.file,
        )

    def partition_named(self, element: etree._Element) -> str | None:
        """The name of the partition a node's ``inPartition`` refers to."""
        in_partition = self.ref(element, "inPartition")
        if in_partition is None:
            return None
        partition = self.partition_names.get(in_partition)
        if partition is None:
            group = self.index.get(in_partition)
            partition = self.name_of(group) if group is not None else None
        return partition

    def register_pins(self, element: etree._Element, owner: str) -> None:
        if not len(element):
            return
        for child in element:
            tag = child.tag
            if not isinstance(tag, str):
                continue
            pin_id = child.get(self.k_id)
            if pin_id is None:
                continue
            typed = child.get(self.k_type) or child.get(self.k_xsi_type)
            if typed is not None:
                is_pin = typed.rpartition(":")[2] in PIN_TYPES
            else:
                is_pin = tag in PIN_FEATURES
            if is_pin:
                self.pin_owner[pin_id] = owner
                self.register_pins(child, owner)  # ActionInputPin owns pins of its own

    def read_action_body(self, element: etree._Element) -> tuple[str | None, str | None, str | None]:
        """``(code, body_text, body_language)`` of an OpaqueAction.

        ``code`` is the body when it is written in python/uml2perf, or when a
        C-style body holds only plain assignments (see :func:`plain_assignments`).
        """
        pairs = self.bodies(element)
        if not pairs:
            return None, None, None
        language, body = self.pick_body(pairs)
        lang = language.strip().lower()
        code = None
        if lang in CODE_LANGUAGES:
            code = body.strip()
        elif lang in ASSIGNMENT_LANGUAGES:
            code = plain_assignments(body)
        return code, body, language or None

    # ------------------------------------------------------------------ loop and conditional nodes

    def read_loop(self, element: etree._Element, region: Region) -> tuple[LoopSpec, Region]:
        """The sections of a LoopNode and the condition its test computes, when the model says it.

        The condition (``LoopSpec.decider``) comes from the test action that
        owns the ``decider`` pin: an OpaqueAction whose python/uml2perf body
        ends with an expression, or a ValueSpecificationAction.  Such a body
        is the test, not a code fragment, so the action keeps only the
        assignments before the expression (see :func:`split_condition`).
        """
        test = tuple(self.refs(element, "test"))
        decider, region = self.test_condition(element, region, test, self.ref(element, "decider"))
        spec = LoopSpec(
            setup=tuple(self.refs(element, "setupPart")),
            test=test,
            body=tuple(self.refs(element, "bodyPart")),
            tested_first=element.get("isTestedFirst") == "true",
            decider=decider,
        )
        return spec, region

    def read_clauses(self, element: etree._Element, region: Region) -> tuple[tuple[Clause, ...], Region]:
        """The clauses of a ConditionalNode in test order, each with the guard its test computes.

        Order follows ``predecessorClause``/``successorClause`` (ties and
        cycles in file order).  ``Clause.guard`` is the condition of the test
        action owning the clause's ``decider`` pin (as for loops), else
        ``"else"`` for the last clause of an ``isAssured`` node (one clause is
        promised to hold, so the last one is the default); ``None`` when the
        file says nothing a prediction can use.
        """
        items: list[tuple[str, etree._Element]] = []
        for position, child in enumerate(self.children(element, "clause")):
            items.append((child.get(self.k_id) or f"clause@{position}", child))
        clauses: list[Clause] = []
        for clause_element in self.clause_order(element, items):
            test = tuple(self.refs(clause_element, "test"))
            guard, region = self.test_condition(element, region, test, self.ref(clause_element, "decider"))
            clauses.append(Clause(test=test, body=tuple(self.refs(clause_element, "body")), guard=guard))
        if clauses and clauses[-1].guard is None and element.get("isAssured") == "true":
            last = clauses[-1]
            clauses[-1] = Clause(last.test, last.body, "else")
        return tuple(clauses), region

    def clause_order(
        self, owner: etree._Element, items: list[tuple[str, etree._Element]]
    ) -> list[etree._Element]:
        """Clauses sorted so each comes after its predecessors; file order breaks ties and cycles."""
        if len(items) < 2:
            return [clause for _, clause in items]
        position = {ident: i for i, (ident, _) in enumerate(items)}
        before: dict[str, set[str]] = {ident: set() for ident, _ in items}
        for ident, clause in items:
            for other in self.refs(clause, "predecessorClause"):
                if other in position and other != ident:
                    before[ident].add(other)
            for other in self.refs(clause, "successorClause"):
                if other in position and other != ident:
                    before[other].add(ident)
        ordered: list[etree._Element] = []
        placed: set[str] = set()
        while len(ordered) < len(items):
            ready = [ident for ident, _ in items if ident not in placed and before[ident] <= placed]
            if not ready:
                self.diag(
                    Severity.WARNING,
                    "the predecessorClause/successorClause links of this conditional node form a cycle; "
                    "the remaining clauses are tested in file order",
                    owner,
                    code="clause-cycle",
                )
                ready = [ident for ident, _ in items if ident not in placed]
                for ident in ready:
                    before[ident].clear()
            placed.add(ready[0])
            ordered.append(items[position[ready[0]]][1])
        return ordered

    def test_condition(
        self, owner: etree._Element, region: Region, test: tuple[str, ...], decider: str | None
    ) -> tuple[str | None, Region]:
        """The condition a loop or clause test computes, and the region with that test action adjusted.

        The action owning the ``decider`` pin is asked first; without one (hand
        drawn models often leave it out) the last test action that yields a
        condition is used.  An OpaqueAction giving the condition keeps only
        the code before its final expression.
        """
        if not test:
            return None, region
        nodes = {node.id: node for node in region.nodes if node.id in test}
        owner_id = self.pin_owner.get(decider) if decider is not None else None
        candidates = [owner_id] if owner_id in nodes else []
        candidates += [ident for ident in reversed(test) if ident in nodes and ident != owner_id]
        for ident in candidates:
            node = nodes[ident]
            if node.uml_type == "ValueSpecificationAction":
                text = self.action_value(owner, ident)
                if text is not None:
                    return text, region
            elif node.code is not None:
                split = split_condition(node.code)
                if split is not None:
                    code, condition = split
                    changed = node.replace(code=code)
                    nodes_out = tuple(changed if n.id == ident else n for n in region.nodes)
                    return condition, Region(nodes_out, region.edges)
        return None, region

    def action_value(self, owner: etree._Element, action_id: str) -> str | None:
        """The ``value`` of the ValueSpecificationAction ``action_id`` owned by ``owner``, as
        expression text.
        """
        for child in owner:
            if child.tag in NODE_FEATURES and child.get(self.k_id) == action_id:
                for value in self.children(child, "value"):
                    text = self.value_text(value)
                    return text.strip() if text and text.strip() else None
        return None

    # ------------------------------------------------------------------ edges

    def read_edge(self, element: etree._Element, state: RegionState) -> Edge | None:
        """One flow; ends that are pins map to their actions, ends outside the region are resolved
        or dropped.
        """
        get = element.get
        eid = get(self.k_id) or ""
        metaclass = self.metaclass(element)
        has_children = len(element) > 0
        name = get("name")
        if name is None:
            name = self.name_of(element) if has_children else ""
        raw_source = get("source")
        raw_target = get("target")
        if has_children or raw_source is None or raw_target is None or " " in raw_source or " " in raw_target:
            raw_source, raw_target = self.ref(element, "source"), self.ref(element, "target")
        source = self.edge_end(element, raw_source, "source", state, name, metaclass)
        if source is None:
            return None
        target = self.edge_end(element, raw_target, "target", state, name, metaclass)
        if target is None:
            return None
        if source == target and raw_source in self.pin_owner:
            self.diag(
                Severity.INFO,
                "object flow between two pins of the same action dropped (it would be a self-loop)",
                element,
                code="dropped-flow",
            )
            return None
        guard = self.guard_of(element) if has_children or get("guard") is not None else None
        return Edge(
            eid,
            source,
            target,
            None,
            name,
            self.edge_kind(element, metaclass),
            guard,
            None,
            self.stereotypes_of(eid),
            line=element.sourceline,
            file=self.file,
            uml_type=metaclass,
        )

    def edge_end(
        self,
        element: etree._Element,
        raw: str | None,
        feature: str,
        state: RegionState,
        name: str,
        metaclass: str,
    ) -> str | None:
        """The node of the region an edge end stands for: the node itself, or the action owning a pin."""
        if raw is None:
            self.diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    f"flow has no {feature}; it is skipped and the rest of the diagram is read",
                    self.location(element, name, metaclass),
                    "every control/object flow needs a source and a target; fix or delete it in the UML tool",
                    "broken-flow",
                )
            )
            return None
        node_id = self.pin_owner.get(raw, raw)
        if node_id in state.ids:
            return node_id
        return self.resolve_end(element, raw, feature, state)

    def edge_kind(self, element: etree._Element, metaclass: str) -> str:
        return "object" if metaclass == "ObjectFlow" else "control"

    def guard_of(self, element: etree._Element) -> str | None:
        """The guard text of a flow: an owned ``guard`` ValueSpecification, or one referenced by id."""
        for child in element:
            if child.tag == "guard":
                return self.value_text(child, guard=True)
        guard_ref = element.get("guard")
        if guard_ref and guard_ref in self.index:
            return self.value_text(self.index[guard_ref], guard=True)
        return None

    def resolve_end(self, edge: etree._Element, raw: str, feature: str, state: RegionState) -> str | None:
        """Map an edge end to a node id of the region; pins map to their owning action."""
        node_id = self.pin_owner.get(raw, raw)
        if node_id in state.ids:
            return node_id
        element = self.index.get(raw)
        if element is None:
            self.diag(
                Severity.WARNING,
                f"flow {feature} refers to id {raw!r}, which is not in the file (dangling id);"
                " the flow is skipped",
                edge,
                hint="the export is incomplete or was edited by hand; re-export the model",
                code="broken-flow",
            )
            return None
        if node_id == state.container or self.is_ancestor_region(node_id, state):
            self.diag(
                Severity.INFO,
                f"flow {feature} is a pin of the enclosing node {node_id!r}: data entering or leaving "
                "the region "
                "has no control meaning and the flow is dropped",
                edge,
                code="dropped-flow",
            )
            return None
        if node_id not in self.region_of:
            substitute = self.outside_endpoint(element, raw, state)
            if substitute is not None:
                return substitute
        self.diag(
            Severity.WARNING,
            f"flow {feature} {self.describe(element)} lies outside the region that owns the flow; "
            "flow dropped",
            edge,
            hint="draw the flow inside one activity or structured node",
            code="dropped-flow",
        )
        return None

    def is_ancestor_region(self, node_id: str, state: RegionState) -> bool:
        """Whether ``node_id`` is a node of a region enclosing ``state`` (a boundary such as an
        ExpansionNode).
        """
        home = self.region_of.get(node_id)
        if home is None:
            return False
        outer = state.parent
        while outer is not None:
            if outer.container == home:
                return True
            outer = outer.parent
        return False

    # ------------------------------------------------------------------ variables, functions, globals

    def read_variable(self, element: etree._Element) -> Variable:
        name = self.name_of(element)
        default = None
        for child in element:
            if child.tag == "defaultValue":
                default = self.value_text(child)
                break
        else:
            default = element.get("default")
        return Variable(
            name=name,
            location=self.location(element, name),
            type_name=self.type_name(element),
            default=default,
            id=self.eid(element),
        )

    def type_name(self, element: etree._Element) -> str | None:
        """The name of an element's type: a local classifier, or the tail of a library href."""
        type_ref = element.get("type")
        if type_ref:
            target = self.index.get(type_ref)
            return self.name_of(target) if target is not None else type_ref
        for child in element:
            if child.tag == "type":
                ref = child.get(self.k_idref)
                if ref:
                    target = self.index.get(ref)
                    return self.name_of(target) if target is not None else ref
                href = child.get("href")
                if href:
                    return href.rpartition("#")[2].rpartition("/")[2] or None
        return None

    def read_function(self, element: etree._Element) -> CostFunction | None:
        """An OpaqueBehavior/FunctionBehavior whose body may be a cost-function expression."""
        name = self.name_of(element)
        pairs = [(lang, body) for lang, body in self.bodies(element) if body.strip()]
        if pairs and not name.strip():
            self.diag(
                Severity.INFO,
                "behavior without a name cannot be called from an expression; not used as a cost function",
                element,
                code="not-a-function",
            )
            return None
        usable = [(lang, body) for lang, body in pairs if lang.strip().lower() in FUNCTION_LANGUAGES]
        if not usable:
            if pairs:
                languages = ", ".join(sorted({lang or "none" for lang, _ in pairs}))
                self.diag(
                    Severity.INFO,
                    f"behavior body in {languages} is not a cost-function expression; not used as a "
                    "cost function",
                    element,
                    code="not-a-function",
                )
            return None
        language, body = self.pick_body(usable)
        parameters = tuple(
            self.name_of(p)
            for p in self.children(element, "ownedParameter")
            if (p.get("direction") or "in") != "return"
        )
        return CostFunction(
            name=name,
            parameters=parameters,
            body=body.strip(),
            location=self.location(element, name),
            language=language or None,
            id=self.eid(element),
        )

    def read_globals(self, element: etree._Element) -> list[Variable]:
        """Attributes of a class named or stereotyped ``globals``."""
        is_globals = self.name_of(element).strip().lower() == "globals" or any(
            s.key == "globals" for s in self.stereotypes_of(self.eid(element))
        )
        if not is_globals:
            return []
        return [self.read_variable(a) for a in self.children(element, "ownedAttribute")]
