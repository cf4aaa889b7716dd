"""Reading UML 2 activity models from XMI, shared by every UML 2 tool.

Eclipse UML2 (Papyrus, RSA, Modelio), MagicDraw/Cameo, Enterprise Architect
and Visual Paradigm all serialise the same UML 2 metamodel; they differ in
namespaces, in which attributes they omit and in a handful of habits.  This
module holds what they share: :class:`Uml2Reader` reads one document into the
neutral model, and the tool modules subclass it to override a few hooks
(where activity nodes live, what an edge to an element outside the activity
means, where stereotypes are stored).  This module also defines the Eclipse
UML2 / Papyrus dialect and the generic fallback for UML 2 files whose
exporter is not recognised.

LoopNode and ConditionalNode tests are read for what they compute: the test
action owning a ``decider`` pin (an OpaqueAction whose python/uml2perf body
ends with an expression, or a ValueSpecificationAction) gives
``LoopSpec.decider`` or ``Clause.guard``; clauses come in
``predecessorClause`` order.  How these become loops and choices is
navigation's business (:mod:`uml2perf.navigation.structure`).

The reader is O(n): one pass over the tree builds the id index and finds
activities, behaviours and classes; each activity is then read once, from its
own subtree, without any XPath over the whole document.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from lxml import etree

from ...errors import Diagnostic, Location, ModelError, Severity
from ...model import (
    Activity,
    Clause,
    CostFunction,
    Edge,
    ElementAnnotations,
    LoopSpec,
    Model,
    Node,
    NodeKind,
    Region,
    StereotypeApplication,
    Variable,
    normalise_name,
)
from ..xml import XSI_NAMESPACE, XmiDocument, local_name

# --------------------------------------------------------------------------- namespaces

_ECLIPSE_UML = re.compile(r"^https?://www\.eclipse\.org/uml2/(\d+)\.\d+\.\d+/UML$")
_OMG_UML = re.compile(r"^https?://www\.omg\.org/spec/UML/(20\d{6})$")
_SCHEMA_OMG_UML = re.compile(r"^https?://schema\.omg\.org/spec/UML/(2\.[\d.]+)$")


def uml2_namespace(doc: XmiDocument) -> str | None:
    """The UML 2 metamodel namespace the file declares, or ``None`` (UML 1.x, not UML at all)."""
    for uri in sorted(doc.namespaces):
        if _ECLIPSE_UML.match(uri) or _OMG_UML.match(uri) or _SCHEMA_OMG_UML.match(uri):
            return uri
    return None


def is_eclipse_uml2(doc: XmiDocument) -> bool:
    """True when the file is an Eclipse UML2 (EMF) serialisation."""
    return any(_ECLIPSE_UML.match(uri) for uri in doc.namespaces)


def is_omg_uml2(doc: XmiDocument) -> bool:
    """True when the file uses an OMG UML 2 namespace (MagicDraw, EA, VP, Umbrello 2...)."""
    return any(_OMG_UML.match(uri) or _SCHEMA_OMG_UML.match(uri) for uri in doc.namespaces)


def exporter_info(doc: XmiDocument) -> tuple[str, str]:
    """``(exporter, extender)`` from ``xmi:Documentation`` and the root ``xmi:Extension``.

    Both are empty strings when absent.  Only the root's direct children are
    looked at, so the cost does not depend on the file size.
    """
    exporter = ""
    extender = ""
    # lxml filters the tags in C: a file with 20,000 root-level stereotype applications costs nothing here
    for child in doc.root.iterchildren("{*}Documentation", "{*}Extension"):
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = local_name(tag)
        if name == "Documentation" and not exporter:
            exporter = child.get("exporter") or ""
            if not exporter:
                for sub in child:
                    if isinstance(sub.tag, str) and local_name(sub.tag) == "exporter":
                        exporter = (sub.text or "").strip()
                        break
            if not extender:
                for sub in child:
                    if isinstance(sub.tag, str) and local_name(sub.tag) == "Extension":
                        extender = sub.get("extender") or ""
        elif name == "Extension" and not extender:
            extender = child.get("extender") or ""
    return exporter, extender


def head_contains(doc: XmiDocument, needle: bytes, limit: int = 8192) -> bool:
    """Whether the first ``limit`` bytes of the raw file contain ``needle``.

    Processing instructions and comments are dropped by the hardened parser,
    so tool signatures written there (RSA) are only visible in the bytes.
    """
    return needle in doc.data[:limit]


# --------------------------------------------------------------------------- metaclass tables

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
EDGE_FEATURES = frozenset({"edge", "ownedEdge", "containedEdge"})
#: Metaclass of an element written without ``xmi:type``, by its feature name.
IMPLICIT_TYPES = {
    "structuredNode": "StructuredActivityNode",
    "clause": "Clause",
    "ownedComment": "Comment",
    "ownedAttribute": "Property",
    "ownedParameter": "Parameter",
    "variable": "Variable",
    "profileApplication": "ProfileApplication",
}
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
#: Languages whose OpaqueBehavior bodies can be cost-function expressions.
FUNCTION_LANGUAGES = frozenset({"", "python", "uml2perf", "c", "c++", "cpp", "expression", "java"})
#: Languages whose OpaqueAction bodies are code fragments (SPEC section 5).
CODE_LANGUAGES = frozenset({"python", "uml2perf"})
#: Languages whose bodies become code fragments when they are plain assignments.
ASSIGNMENT_LANGUAGES = frozenset({"", "c", "c++", "cpp"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*\s*(?:[-+*/%]|//|\*\*)?=(?!=)\s*[^;{}]+$")
_SKIPPED_WRAPPERS = frozenset({"Extension", "eAnnotations", "XMI.extension"})
#: Metaclasses whose stereotype applications are kept in ``Model.annotations``: the
#: containers an annotation of the whole analysis (MARTE GaAnalysisContext) is applied to.
ANNOTATED_CONTAINERS = frozenset(
    {"Model", "Package", "Class", "Component", "Collaboration", "Interaction", "StateMachine"}
)


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


#: :func:`_kind_of_metaclass` memoised (a model repeats a few metaclasses thousands of times).
_KIND_OF_METACLASS: dict[str, NodeKind | None] = {}
_UNSEEN = object()


def _label(stereotype: StereotypeApplication) -> str:
    """``Profile:Stereotype`` as the file wrote it, for messages."""
    return f"{stereotype.profile}:{stereotype.name}" if stereotype.profile else stereotype.name


def plural(count: int, singular: str, plural_form: str) -> str:
    return f"{count} {singular if count == 1 else plural_form}"


def describe_contents(contents: Iterable[tuple[str, int]]) -> str:
    """``12 classes, 2 state machines`` from ``Model.contents``; ``nothing UML`` when empty."""
    singulars = {plural_form: singular for singular, plural_form in CONTENT_LABELS.values()}
    singulars[STEREOTYPE_LABEL] = "stereotype application"
    parts = [plural(n, singulars.get(label, label), label) for label, n in contents if n]
    return ", ".join(parts) if parts else "no UML elements at all"


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


# --------------------------------------------------------------------------- reader state


@dataclass
class RegionState:
    """The region being built: its container id, nodes so far and their ids."""

    container: str
    nodes: list[Node] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    parent: RegionState | None = None

    def add(self, node: Node) -> None:
        self.nodes.append(node)
        self.ids.add(node.id)


class Uml2Reader:
    """Reads one UML 2 XMI document into a :class:`Model`.

    One instance per read: it owns the id index, the stereotype table and the
    diagnostics.  Tool dialects subclass it and override the hooks
    (``node_kind``, ``outside_endpoint``, ``adjust_edges``,
    ``extra_stereotypes``, ``finish``) rather than adding special cases here.
    """

    dialect_name = "uml2"

    def __init__(self, doc: XmiDocument):
        self.doc = doc
        self.file = doc.display_name
        self.diagnostics: list[Diagnostic] = []
        xmi_ns = doc.xmi_namespace or "http://www.omg.org/XMI"
        self.k_id = f"{{{xmi_ns}}}id"
        self.k_idref = f"{{{xmi_ns}}}idref"
        self.k_type = f"{{{xmi_ns}}}type"
        self.k_xsi_type = f"{{{XSI_NAMESPACE}}}type"
        self.xmi_ns = xmi_ns
        self.uml_ns = uml2_namespace(doc)
        self._index: dict[str, etree._Element] | None = None
        self._roots: list[etree._Element] | None = None
        #: element id -> the stereotype applications on it
        self.stereotypes: dict[str, tuple[StereotypeApplication, ...]] = {}
        #: each distinct application once, by ((name, profile), tags)
        self.shared_applications: dict[
            tuple[tuple[str, str], tuple[tuple[str, str], ...]], StereotypeApplication
        ] = {}
        self.pending_bases: list[
            tuple[str, StereotypeApplication, etree._Element]
        ] = []  # (base id, applied, element)
        self.used_bases: set[str] = set()
        self.partition_names: dict[str, str] = {}
        self.stereotype_count = 0
        self.pin_owner: dict[str, str] = {}
        self.region_of: dict[str, str] = {}  # node id -> container id
        self.parent_region: dict[str, str | None] = {}  # container id -> its own container
        self.partition_of: dict[str, str] = {}
        self.activity_elements: list[etree._Element] = []
        self.behavior_elements: list[etree._Element] = []
        self.class_elements: list[etree._Element] = []
        self.orphan_edges: list[etree._Element] = []
        self.counts: Counter[str] = Counter()
        self.comment_count = 0

    # ------------------------------------------------------------------ entry point

    @property
    def index(self) -> dict[str, etree._Element]:
        """xmi:id -> element over the whole file, built on first use (one C-level walk).

        Plain files never need it: nodes, pins and edges are resolved from the
        activity being read.  Stereotypes on other elements, tool quirks and
        error messages build it.
        """
        if self._index is None:
            k_id = self.k_id
            index: dict[str, etree._Element] = {}
            for element in self.doc.root.iter():
                ident = element.get(k_id)
                if ident is not None and ident not in index:
                    index[ident] = element
            self._index = index
        return self._index

    def read(self) -> Model:
        self.scan()
        self.read_stereotypes()
        self.extra_stereotypes()
        self.prepare()
        activities = tuple(self.read_activity(el) for el in self.activity_elements)
        functions = tuple(f for f in (self.read_function(el) for el in self.behavior_elements) if f)
        globals_ = tuple(v for el in self.class_elements for v in self.read_globals(el))
        self.check_stereotype_bases()
        annotations = self.container_annotations()
        self.report_skipped()
        self.finish()
        contents = [
            (plural_form, self.counts[metaclass])
            for metaclass, (_, plural_form) in CONTENT_LABELS.items()
            if self.counts[metaclass]
        ]
        if self.stereotype_count:
            contents.append((STEREOTYPE_LABEL, self.stereotype_count))
        return Model(
            source=self.doc.path,
            dialect=self.dialect_name,
            name=self.model_name(),
            activities=activities,
            functions=functions,
            globals=globals_,
            contents=tuple(contents),
            diagnostics=tuple(self.diagnostics),
            annotations=annotations,
        )

    def container_annotations(self) -> tuple[ElementAnnotations, ...]:
        """Applications on the model, packages and classes (not on activities, nodes or flows)."""
        found: list[ElementAnnotations] = []
        seen: set[str] = set()
        for base, _stereotype, _application in self.pending_bases:
            if base in self.used_bases or base in seen:
                continue
            seen.add(base)
            element = self.index.get(base)
            if element is None:
                continue
            metaclass = self.metaclass(element)
            if metaclass not in ANNOTATED_CONTAINERS:
                continue
            name = self.name_of(element)
            found.append(
                ElementAnnotations(
                    base,
                    metaclass,
                    name,
                    self.location(element, name or None, metaclass),
                    self.stereotypes_of(base),
                )
            )
        return tuple(found)

    # ------------------------------------------------------------------ hooks

    def prepare(self) -> None:
        """Called after the scan, before activities are read (dialects rearrange here)."""

    def finish(self) -> None:
        """Called after everything is read (dialects add their diagnostics here)."""

    def extra_stereotypes(self) -> None:
        """Add stereotype applications stored outside the root (EA keeps them in xmi:Extension)."""

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
        """The neutral kind of an activity node, ``None`` for pins and non-nodes."""
        kind = _KIND_OF_METACLASS.get(metaclass, _UNSEEN)
        if kind is _UNSEEN:
            kind = _kind_of_metaclass(metaclass)
            if len(_KIND_OF_METACLASS) < 1024:  # a file names a handful of metaclasses, a hostile one many
                _KIND_OF_METACLASS[metaclass] = kind
        return kind  # type: ignore[return-value]

    # ------------------------------------------------------------------ small helpers

    def metaclass(self, element: etree._Element) -> str:
        """``xmi:type``/``xsi:type`` without prefix, else the implicit type of the feature, else the tag."""
        value = element.get(self.k_type) or element.get(self.k_xsi_type)
        if value:
            return value.rpartition(":")[2]
        tag = element.tag
        if not isinstance(tag, str):
            return ""
        name = tag.rpartition("}")[2]
        return IMPLICIT_TYPES.get(name, name)

    def typed_uml(self, element: etree._Element) -> str | None:
        """The metaclass when the element is explicitly typed as a UML element, else ``None``."""
        value = element.get(self.k_type) or element.get(self.k_xsi_type)
        if not value:
            return None
        prefix, _, name = value.rpartition(":")
        if prefix and element.nsmap.get(prefix) != self.uml_ns:
            return None
        return name

    def eid(self, element: etree._Element) -> str | None:
        return element.get(self.k_id)

    def location(
        self, element: etree._Element | None, name: str | None = None, uml_type: str | None = None
    ) -> Location:
        if element is None:
            return Location(file=self.file)
        return Location(
            file=self.file,
            line=element.sourceline,
            element_id=element.get(self.k_id),
            name=name if name is not None else (element.get("name") or None),
            uml_type=uml_type or self.metaclass(element),
        )

    def diag(
        self,
        severity: Severity,
        message: str,
        element: etree._Element | None = None,
        hint: str | None = None,
        code: str | None = None,
    ) -> None:
        self.diagnostics.append(Diagnostic(severity, message, self.location(element), hint, code))

    def name_of(self, element: etree._Element) -> str:
        name = element.get("name")
        if name is not None:
            return name
        for child in element:
            if child.tag == "name":
                return (child.text or "").strip()
        return ""

    def refs(self, element: etree._Element, feature: str) -> list[str]:
        """Ids an element refers to through ``feature``: attribute list, ``xmi:idref`` or ``href`` children."""
        value = element.get(feature)
        if not len(element):
            return value.split() if value else []
        found: list[str] = value.split() if value else []
        for child in element:
            if child.tag == feature:
                ref = child.get(self.k_idref) or child.get(self.k_id)
                if ref:
                    found.append(ref)
                else:
                    href = child.get("href")
                    if href:
                        found.append(href.rpartition("#")[2])
        return found

    def ref(self, element: etree._Element, feature: str) -> str | None:
        value = element.get(feature)
        if value:
            return value.split(None, 1)[0]
        found = self.refs(element, feature)
        return found[0] if found else None

    def children(self, element: etree._Element, feature: str) -> Iterator[etree._Element]:
        """The children written under ``feature`` (lxml compares the tags in C: an activity has thousands)."""
        return element.iterchildren(feature)

    def in_skipped_wrapper(self, element: etree._Element) -> bool:
        """Whether the element sits in a tool extension or annotation (diagrams, EA tables...)."""
        for ancestor in element.iterancestors():
            tag = ancestor.tag
            if isinstance(tag, str) and tag.rpartition("}")[2] in _SKIPPED_WRAPPERS:
                return True
        return False

    def model_name(self) -> str:
        for element in self.model_roots():
            name = element.get("name")
            if name:
                return name
        return ""

    def model_roots(self) -> list[etree._Element]:
        """The UML top-level elements: the root itself, or the root's children in the UML namespace."""
        if self._roots is None:
            root = self.doc.root
            prefix = f"{{{self.uml_ns}}}"
            if isinstance(root.tag, str) and root.tag.startswith(prefix):
                self._roots = [root]
            else:
                self._roots = [c for c in root if isinstance(c.tag, str) and c.tag.startswith(prefix)]
        return self._roots

    # ------------------------------------------------------------------ the global pass

    #: Features under which UML owns the classifiers, packages and behaviours the scan looks for.
    SCAN_FEATURES = (
        "packagedElement",
        "ownedMember",
        "nestedClassifier",
        "ownedBehavior",
        "ownedUseCase",
        "ownedComment",
        "nestedPackage",
        "ownedType",
        "entry",
        "exit",
        "doActivity",
        "effect",
        "method",
    )

    def scan(self) -> None:
        """One pass over the owning features: activities, behaviours, classes, content counts.

        Only elements under :data:`SCAN_FEATURES` are visited (lxml filters
        the tags in C), so the thousands of nodes, pins and edges of a big
        activity cost nothing here.
        """
        counts = self.counts
        interesting = CONTENT_LABELS.keys() | {"Comment", "Model"}
        roots = self.model_roots()
        candidates: list[etree._Element] = list(roots)
        for root in roots:
            candidates.extend(root.iter(*self.SCAN_FEATURES))
        for element in candidates:
            typed = element.get(self.k_type) or element.get(self.k_xsi_type)
            if typed is None:
                if element.tag == "ownedComment":
                    typed = "uml:Comment"
                elif element in roots:
                    typed = "uml:" + local_name(element.tag)
                else:
                    continue
            metaclass = typed.rpartition(":")[2]
            if metaclass not in interesting or element.get("href") is not None:
                continue  # not counted, or a proxy for an element of another file
            if element.tag != "ownedComment" and element not in roots and self.typed_uml(element) is None:
                continue
            if self.in_skipped_wrapper(element):
                continue
            if metaclass == "Comment":
                self.comment_count += 1
                continue
            if metaclass in ("Package", "Model"):
                self.orphan_edges.extend(c for c in element if c.tag in EDGE_FEATURES)
                if metaclass == "Model":
                    continue
            counts[metaclass] += 1
            if metaclass == "Activity":
                self.activity_elements.append(element)
            elif metaclass in ("OpaqueBehavior", "FunctionBehavior"):
                self.behavior_elements.append(element)
            elif metaclass == "Class":
                self.class_elements.append(element)

    # ------------------------------------------------------------------ stereotypes

    def read_stereotypes(self) -> None:
        """Root-level stereotype applications: ``<Profile:Stereo base_X="id" tag="v"/>``.

        A large model applies a handful of distinct stereotypes (same name, same
        tags) thousands of times: each distinct one is built once and shared.
        """
        skip = tuple(
            f"{{{ns}}}"
            for ns in (self.xmi_ns, self.uml_ns, "http://www.eclipse.org/emf/2002/Ecore", XSI_NAMESPACE)
            if ns
        ) + ("{http://www.omg.org/spec/XMI", "{http://schema.omg.org/spec/XMI")
        root = self.doc.root
        if self.uml_ns and root.tag == f"{{{self.uml_ns}}}Model":
            return  # the file is the model itself (no xmi:XMI wrapper): it holds no applications
        stereotypes, pending, shared = self.stereotypes, self.pending_bases, self.shared_applications
        #: tag -> (stereotype name, profile), or None for what is not an application
        names: dict[object, tuple[str, str] | None] = {}
        for element in root:
            tag = element.tag
            if tag in names:
                named = names[tag]
            else:
                # applications always live in a profile's namespace; un-namespaced tags are UML features
                named = None
                if isinstance(tag, str) and tag[0] == "{" and not tag.startswith(skip):
                    namespace, _, name = tag[1:].partition("}")
                    named = (name, element.prefix or namespace)
                names[tag] = named
            if named is None:
                continue
            if len(element):
                self.read_application(element)
                continue
            base = None
            tags: list[tuple[str, str]] = []
            for key, value in element.items():
                if key[0] == "{":
                    continue
                if key.startswith("base_"):
                    if base is None and " " not in value:
                        base = value
                    elif value != base:
                        base = ""  # several bases: the general path
                else:
                    tags.append((key, value))
            if not base or base in stereotypes:
                self.read_application(element)
                continue
            key = (named, tuple(tags))
            stereotype = shared.get(key)
            if stereotype is None:
                stereotype = shared[key] = StereotypeApplication(named[0], named[1], key[1])
            self.stereotype_count += 1
            stereotypes[base] = (stereotype,)
            pending.append((base, stereotype, element))

    def read_application(self, element: etree._Element) -> None:
        bases: list[str] = []
        tags: list[tuple[str, str]] = []
        for key, value in element.items():
            if key[0] == "{":
                continue
            if key.startswith("base_"):
                for ref in value.split():
                    if ref not in bases:
                        bases.append(ref)
            else:
                tags.append((key, value))
        for child in element if len(element) else ():
            ctag = child.tag
            if not isinstance(ctag, str):
                continue
            name = local_name(ctag)
            if name.startswith("base_"):
                ref = child.get(self.k_idref) or (child.get("href") or "").rpartition("#")[2]
                if ref and ref not in bases:
                    bases.append(ref)
                continue
            if len(child):
                continue  # a structured value (a data-type instance): not a tag we interpret
            ref = child.get(self.k_idref)
            tags.append((name, ref if ref else (child.text or "").strip()))
        namespace, _, name = (
            element.tag[1:].partition("}") if element.tag[0] == "{" else ("", "", element.tag)
        )
        stereotype = StereotypeApplication(name, element.prefix or namespace or None, tuple(tags))
        self.stereotype_count += 1
        if not bases:
            self.diag(
                Severity.WARNING,
                f"stereotype application {_label(stereotype)} is applied to no element (no base_* reference); ignored",
                element,
                code="orphan-stereotype",
            )
            return
        pending, add = self.pending_bases, self.add_stereotype
        for base in bases:
            pending.append((base, stereotype, element))
            add(base, stereotype)

    def check_stereotype_bases(self) -> None:
        """Warn about applications whose base element is not in the file.

        Checked after reading, so the id index is only built when some
        application points at something other than a node, flow or activity.
        """
        for base, stereotype, element in self.pending_bases:
            if base in self.used_bases or base in self.index:
                continue
            self.diag(
                Severity.WARNING,
                f"stereotype application {_label(stereotype)} refers to element id {base!r}, which is not in the file",
                element,
                hint="the model may have been exported partially; re-export it with its profiles",
                code="dangling-stereotype",
            )

    def add_stereotype(self, element_id: str, stereotype: StereotypeApplication) -> None:
        """Attach an application, merging tags into an existing one of the same name."""
        existing = self.stereotypes.get(element_id, ())
        for position, old in enumerate(existing):
            if old.key == stereotype.key:
                # a second application of the same stereotype adds its tags; a tag given again with
                # another value is kept too, so that the profile reports the conflict
                known = {(normalise_name(n), v.strip()) for n, v in old.tags}
                extra = tuple(
                    (n, v) for n, v in stereotype.tags if (normalise_name(n), v.strip()) not in known
                )
                merged = StereotypeApplication(old.name, old.profile, old.tags + extra)
                self.stereotypes[element_id] = existing[:position] + (merged,) + existing[position + 1 :]
                return
        self.stereotypes[element_id] = (*existing, stereotype)

    def stereotypes_of(self, element_id: str | None) -> tuple[StereotypeApplication, ...]:
        """The applications on an element, which then counts as read (not a dangling base)."""
        if element_id is None:
            return ()
        found = self.stereotypes.get(element_id, ())
        if found:
            self.used_bases.add(element_id)
        return found

    # ------------------------------------------------------------------ value specifications

    def bodies(self, element: etree._Element) -> list[tuple[str, str]]:
        """``(language, body)`` pairs of an opaque element; ``body``/``language`` as children or attributes."""
        body_list: list[str] = []
        lang_list: list[str] = []
        for child in element if len(element) else ():
            tag = child.tag
            if tag == "body":
                body_list.append(child.text or "")
            elif tag == "language":
                lang_list.append((child.text or "").strip())
        if not body_list and element.get("body") is not None:
            body_list = [element.get("body") or ""]
        if not lang_list and element.get("language") is not None:
            lang_list = (
                (element.get("language") or "").split(",")
                if len(body_list) > 1
                else [element.get("language") or ""]
            )
        return [(lang_list[i] if i < len(lang_list) else "", body) for i, body in enumerate(body_list)]

    def value_text(self, spec: etree._Element, guard: bool = False) -> str | None:
        """The text of a ValueSpecification as an expression, following UML defaults.

        For guards, the tools' default ``true`` (and an empty body) means no guard.
        """
        metaclass = self.metaclass(spec)
        value = spec.get("value")
        if metaclass == "LiteralBoolean":
            if guard:
                return None if value in (None, "", "true") else "False"
            return "True" if value == "true" else "False"
        if metaclass == "LiteralInteger":
            return value if value not in (None, "") else "0"
        if metaclass == "LiteralReal":
            return value if value not in (None, "") else "0.0"
        if metaclass == "LiteralUnlimitedNatural":
            return value if value not in (None, "") else "0"
        if metaclass == "LiteralString":
            text = value if value is not None else (spec.findtext("value") or "")
            return self._clean_guard(text) if guard else text
        if metaclass == "LiteralNull":
            return None
        if metaclass in ("OpaqueExpression", "Expression", "TimeExpression", "Duration"):
            pairs = self.bodies(spec)
            if not pairs:
                symbol = spec.get("symbol")
                return symbol if symbol else None
            text = self.pick_body(pairs)[1].strip()
            return self._clean_guard(text) if guard else text
        if metaclass == "InstanceValue":
            target = self.index.get(self.ref(spec, "instance") or "")
            return self.name_of(target) if target is not None else None
        return value

    @staticmethod
    def _clean_guard(text: str) -> str | None:
        text = text.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1].strip()
        if not text or text.lower() == "true":
            return None
        return text

    @staticmethod
    def pick_body(pairs: list[tuple[str, str]]) -> tuple[str, str]:
        """Prefer a body in our own languages, then one in no language, then the first."""
        for preferred in (CODE_LANGUAGES, {""}):
            for language, body in pairs:
                if language.strip().lower() in preferred:
                    return language, body
        return pairs[0]

    # ------------------------------------------------------------------ activities

    def read_activity(self, element: etree._Element) -> Activity:
        aid = self.eid(element) or f"activity@{element.sourceline}"
        name = self.name_of(element)
        self.read_partitions(element)
        state = RegionState(aid)
        self.parent_region[aid] = None
        region = self.read_region(element, state)
        return Activity(
            id=aid,
            name=name,
            location=self.location(element, name, "Activity"),
            region=region,
            attributes=tuple(self.read_variable(a) for a in self.children(element, "ownedAttribute")),
            variables=tuple(self.read_variable(v) for v in self.children(element, "variable")),
            stereotypes=self.stereotypes_of(aid),
        )

    def read_partitions(self, activity: etree._Element) -> None:
        """Map node ids to partition names, from ``group``/``partition`` and their ``node`` lists."""
        stack = list(activity.iterchildren("group", "partition", "ownedGroup"))
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
        """The nodes and flows ``container`` owns, in file order; flows are read once every node is known."""
        edge_elements: list[etree._Element] = []
        k_id = self.k_id
        for child in container:
            tag = child.tag
            if tag in NODE_FEATURES:
                nid = child.get(k_id)
                if nid is not None:  # without an id: a reference (partition membership), not a definition
                    node = self.read_node(child, state, nid)
                    if node is not None:
                        state.add(node)
            elif tag in EDGE_FEATURES and child.get(k_id) is not None:
                edge_elements.append(child)
        edges: list[Edge] = []
        for element in self.adjust_edges(state.container, edge_elements):
            edge = self.read_edge(element, state)
            if edge is not None:
                edges.append(edge)
        return Region(tuple(state.nodes), tuple(edges))

    def typed_metaclass(self, element: etree._Element) -> str:
        """The metaclass of an element of an activity, the common case (``xmi:type`` given) first."""
        typed = element.get(self.k_type)
        return typed.rpartition(":")[2] if typed else self.metaclass(element)

    def read_node(self, element: etree._Element, state: RegionState, nid: str | None = None) -> Node | None:
        """One activity node (``nid``: its xmi:id when the caller has it)."""
        get = element.get
        if nid is None:
            nid = get(self.k_id) or ""
        metaclass = self.typed_metaclass(element)
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
            Location(self.file, element.sourceline, nid, name or None, metaclass),
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
                    changed = replace(node, code=code)
                    nodes_out = tuple(changed if n.id == ident else n for n in region.nodes)
                    return condition, Region(nodes_out, region.edges)
        return None, region

    def action_value(self, owner: etree._Element, action_id: str) -> str | None:
        """The ``value`` of the ValueSpecificationAction ``action_id`` owned by ``owner``, as expression text."""
        for child in owner:
            if child.tag in NODE_FEATURES and child.get(self.k_id) == action_id:
                for value in self.children(child, "value"):
                    text = self.value_text(value)
                    return text.strip() if text and text.strip() else None
        return None

    # ------------------------------------------------------------------ edges

    def read_edge(self, element: etree._Element, state: RegionState) -> Edge | None:
        """One flow; ends that are pins map to their actions, ends outside the region are resolved or dropped."""
        get = element.get
        eid = get(self.k_id) or ""
        metaclass = self.typed_metaclass(element)
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
            Location(self.file, element.sourceline, eid, name or None, metaclass),
            name,
            self.edge_kind(element, metaclass),
            guard,
            None,
            self.stereotypes_of(eid),
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
            raise ModelError(
                f"flow has no {feature}",
                self.location(element, name, metaclass),
                hint="every control/object flow needs a source and a target; fix or delete it in the UML tool",
            )
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
            raise ModelError(
                f"flow {feature} refers to id {raw!r}, which is not in the file (dangling id)",
                self.location(edge),
                hint="the export is incomplete or was edited by hand; re-export the model",
            )
        if node_id == state.container or self.is_ancestor_region(node_id, state):
            self.diag(
                Severity.INFO,
                f"flow {feature} is a pin of the enclosing node {node_id!r}: data entering or leaving the region "
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
            f"flow {feature} {self.describe(element)} lies outside the region that owns the flow; flow dropped",
            edge,
            hint="draw the flow inside one activity or structured node",
            code="dropped-flow",
        )
        return None

    def is_ancestor_region(self, node_id: str, state: RegionState) -> bool:
        """Whether ``node_id`` is a node of a region enclosing ``state`` (a boundary such as an ExpansionNode)."""
        home = self.region_of.get(node_id)
        if home is None:
            return False
        outer = state.parent
        while outer is not None:
            if outer.container == home:
                return True
            outer = outer.parent
        return False

    def describe(self, element: etree._Element) -> str:
        name = self.name_of(element)
        ident = element.get(self.k_id)
        text = self.metaclass(element)
        if name:
            text += f" {name!r}"
        if ident:
            text += f" [xmi:id={ident}]"
        return text

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
                    f"behavior body in {languages} is not a cost-function expression; not used as a cost function",
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

    # ------------------------------------------------------------------ skipped material

    def report_skipped(self) -> None:
        root = self.doc.root
        diagrams = sum(
            1 for _ in root.iter("{*}Diagram", "diagram", "{*}diagram", "{*}diagramRepresentation")
        )
        diagrams += sum(1 for el in root.iter("contents") if (el.get(self.k_type) or "").endswith(":Diagram"))
        if diagrams:
            self.diag(
                Severity.INFO,
                f"skipped {plural(diagrams, 'diagram', 'diagrams')}: layout is not part of the performance model",
                code="skipped-diagrams",
            )
        if self.pin_owner:
            self.diag(
                Severity.INFO,
                f"{plural(len(self.pin_owner), 'pin', 'pins')} read as part of their actions: "
                "a flow to or from a pin connects its action",
                code="skipped-pins",
            )
        if self.partition_names:
            self.diag(
                Severity.INFO,
                f"{plural(len(self.partition_names), 'partition', 'partitions')} (swimlanes) kept as the "
                "partition name of their nodes, for reports; they do not change the timing",
                code="partitions",
            )
        if self.comment_count:
            self.diag(
                Severity.INFO,
                f"skipped {plural(self.comment_count, 'comment', 'comments')}: comments are not part of the "
                "performance model",
                code="skipped-comments",
            )
        for edge in self.orphan_edges:
            self.diag(
                Severity.WARNING,
                "flow owned by a package, outside any activity; ignored",
                edge,
                hint="move the flow into the activity whose nodes it connects",
                code="orphan-flow",
            )


# --------------------------------------------------------------------------- dialects


class Uml2Dialect:
    """Generic UML 2: any exporter not recognised; read with the shared rules and a warning."""

    name = "uml2"
    description = "generic UML 2 XMI from an exporter not recognised (read with the standard rules)"
    reader_class: type[Uml2Reader] = Uml2Reader

    def detect(self, doc: XmiDocument) -> int:
        return 10 if uml2_namespace(doc) else 0

    def read(self, doc: XmiDocument) -> Model:
        reader = self.reader_class(doc)
        reader.dialect_name = self.name
        model = reader.read()
        if self.name == "uml2":
            exporter, extender = exporter_info(doc)
            said = exporter or extender or "no exporter named"
            warning = Diagnostic(
                Severity.WARNING,
                f"UML 2 file from an exporter uml2perf does not know ({said}); read with the generic UML 2 rules",
                Location(file=doc.display_name),
                hint="check the result with `uml2perf check`; tool quirks may be missed",
                code="unknown-exporter",
            )
            model = _with_diagnostics(model, (warning,))
        return model


def _with_diagnostics(model: Model, extra: tuple[Diagnostic, ...]) -> Model:
    from dataclasses import replace

    return replace(model, diagnostics=model.diagnostics + extra)


class PapyrusDialect(Uml2Dialect):
    """Eclipse UML2 serialisations: Papyrus, Moka, Alf, and any EMF-based tool."""

    name = "papyrus"
    description = "Eclipse UML2 / Papyrus (.uml; UML2 namespaces 2.x-5.x, XMI 2.0 and 20131001)"

    def detect(self, doc: XmiDocument) -> int:
        return 80 if is_eclipse_uml2(doc) else 0


GENERIC = Uml2Dialect()
PAPYRUS = PapyrusDialect()
DIALECT = PAPYRUS
