"""Stereotype applications and their tagged values, as a UML 2 file writes them.

Applications live at the root of the file, one element per application
(``<Profile:Stereo base_X="id" tag="v"/>``), tagged values as attributes or
children.  :class:`StereotypeReading` collects them by the id of the element
they apply to, merges a second application of the same stereotype, shares
identical applications (a large model applies a handful of distinct ones
thousands of times), and reports applications whose element is missing.
What the stereotypes mean is the profile's business (:mod:`uml2perf.profile`).
"""

from __future__ import annotations

from lxml import etree

from ..errors import Severity
from ..model import ElementAnnotations, StereotypeApplication, normalise_name
from .xmi import XmiAccess
from .xml import XSI_NAMESPACE, XmiDocument, local_name

#: Metaclasses whose stereotype applications are kept in ``Model.annotations``: the
#: containers an annotation of the whole analysis (MARTE GaAnalysisContext) is applied to.
ANNOTATED_CONTAINERS = frozenset(
    {"Model", "Package", "Class", "Component", "Collaboration", "Interaction", "StateMachine"}
)


def _label(stereotype: StereotypeApplication) -> str:
    """``Profile:Stereotype`` as the file wrote it, for messages."""
    return f"{stereotype.profile}:{stereotype.name}" if stereotype.profile else stereotype.name


class StereotypeReading(XmiAccess):
    """Reads the stereotype applications of a UML 2 document."""

    def __init__(self, doc: XmiDocument):
        super().__init__(doc)
        #: element id -> the stereotype applications on it
        self.stereotypes: dict[str, tuple[StereotypeApplication, ...]] = {}
        #: each distinct application once, as the one-application tuple of the elements it is alone
        #: on, by ((name, profile), tags)
        self.shared_applications: dict[
            tuple[tuple[str, str], tuple[tuple[str, str], ...]], tuple[StereotypeApplication]
        ] = {}
        #: (base id, application, element) of every application read
        self.pending_bases: list[tuple[str, StereotypeApplication, etree._Element]] = []
        self.used_bases: set[str] = set()
        self.stereotype_count = 0

    def extra_stereotypes(self) -> None:
        """Add stereotype applications stored outside the root (EA keeps them in xmi:Extension)."""

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
        count = 0
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
            applied = shared.get(key)
            if applied is None:
                applied = shared[key] = (StereotypeApplication(named[0], named[1], key[1]),)
            count += 1
            stereotypes[base] = applied
            pending.append((base, applied[0], element))
        self.stereotype_count += count

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
                f"stereotype application {_label(stereotype)} is applied to no element (no base_* "
                "reference); ignored",
                element,
                code="orphan-stereotype",
            )
            return
        pending, add = self.pending_bases, self.add_stereotype
        for base in bases:
            pending.append((base, stereotype, element))
            add(base, stereotype)

    def check_stereotype_bases(self) -> list[tuple[str, StereotypeApplication, etree._Element]]:
        """Warn about applications whose base element is not in the file; return the applications whose
        base was not read (a few at most: :meth:`container_annotations` looks at them alone).

        Checked after reading, so the id index is only built when some
        application points at something other than a node, flow or activity.
        """
        used = self.used_bases
        unread = [pending for pending in self.pending_bases if pending[0] not in used]
        for base, stereotype, element in unread:
            if base in self.index:
                continue
            self.diag(
                Severity.WARNING,
                f"stereotype application {_label(stereotype)} refers to element id {base!r}, which is "
                "not in the file",
                element,
                hint="the model may have been exported partially; re-export it with its profiles",
                code="dangling-stereotype",
            )
        return unread

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

    def container_annotations(
        self, unread: list[tuple[str, StereotypeApplication, etree._Element]] | None = None
    ) -> tuple[ElementAnnotations, ...]:
        """Applications on the model, packages and classes (not on activities, nodes or flows).

        ``unread``: what :meth:`check_stereotype_bases` returned, when it ran just before (every
        application otherwise).
        """
        found: list[ElementAnnotations] = []
        seen: set[str] = set()
        for base, _stereotype, _application in self.pending_bases if unread is None else unread:
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
