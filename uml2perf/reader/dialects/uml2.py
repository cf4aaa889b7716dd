"""The UML 2 reader shared by every UML 2 tool, and the Eclipse UML2 / Papyrus and generic dialects.

Eclipse UML2 (Papyrus, RSA, Modelio), MagicDraw/Cameo, Enterprise Architect
and Visual Paradigm all serialise the same UML 2 metamodel; they differ in
namespaces, in which attributes they omit and in a handful of habits.
:class:`Uml2Reader` reads one document into the neutral model: XMI access
comes from :mod:`uml2perf.reader.xmi`, stereotype applications from
:mod:`uml2perf.reader.stereotypes`, activities from
:mod:`uml2perf.reader.activities`; this module adds the pass that finds
activities, behaviours and classes, and the report of what was skipped.
Tool modules subclass the reader to override a few hooks.

The reader is O(n): one pass over the owning features finds activities,
behaviours and classes; each activity is then read once, from its own
subtree, without any XPath over the whole document.
"""

from __future__ import annotations

from collections import Counter

from lxml import etree

from ...errors import Diagnostic, Location, Severity
from ...model import CONTENT_LABELS, STEREOTYPE_LABEL, Model, plural
from ..activities import EDGE_FEATURES, PIN_TYPES, ActivityReading, RegionState
from ..xmi import exporter_info, head_contains, is_eclipse_uml2, is_omg_uml2, uml2_namespace
from ..xml import XmiDocument, local_name


class Uml2Reader(ActivityReading):
    """Reads one UML 2 XMI document into a :class:`Model`.

    One instance per read: it owns the id index, the stereotype table and the
    diagnostics.  Tool dialects subclass it and override the hooks
    (``node_kind``, ``outside_endpoint``, ``adjust_edges``,
    ``extra_stereotypes``, ``prepare``, ``finish``) rather than adding special cases here.
    """

    dialect_name = "uml2"

    def __init__(self, doc: XmiDocument):
        super().__init__(doc)
        self.activity_elements: list[etree._Element] = []
        self.behavior_elements: list[etree._Element] = []
        self.class_elements: list[etree._Element] = []
        self.orphan_edges: list[etree._Element] = []
        self.counts: Counter[str] = Counter()
        self.comment_count = 0

    def read(self) -> Model:
        self.scan()
        self.read_stereotypes()
        self.extra_stereotypes()
        self.prepare()
        activities = tuple(self.read_activity(el) for el in self.activity_elements)
        functions = tuple(f for f in (self.read_function(el) for el in self.behavior_elements) if f)
        globals_ = tuple(v for el in self.class_elements for v in self.read_globals(el))
        unread = self.check_stereotype_bases()
        annotations = self.container_annotations(unread)
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

    def prepare(self) -> None:
        """Called after the scan, before activities are read (dialects rearrange here)."""

    def finish(self) -> None:
        """Called after everything is read (dialects add their diagnostics here)."""

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
                f"skipped {plural(diagrams, 'diagram', 'diagrams')}: layout is not part of the "
                "performance model",
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
                f"UML 2 file from an exporter uml2perf does not know ({said}); read with the generic "
                "UML 2 rules",
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


__all__ = [
    "DIALECT",
    "GENERIC",
    "PAPYRUS",
    "PIN_TYPES",
    "PapyrusDialect",
    "RegionState",
    "Uml2Dialect",
    "Uml2Reader",
    "exporter_info",
    "head_contains",
    "is_eclipse_uml2",
    "is_omg_uml2",
]
