"""Stereotypes, MARTE and the sidecar interpreted into one ``PerfSpec`` per element."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from ..errors import Diagnostic, Location, Severity
from ..expressions import SYSTEM_PARAMETERS, means_else
from ..model import (
    Activity,
    CostFunction,
    Edge,
    Model,
    Node,
    NodeKind,
    PerfSpec,
    Region,
    Role,
    StereotypeApplication,
    Variable,
    normalise_name,
    plain_assignments,
    runs_as_action,
)
from .guards import (
    GuardReading,
    known_names,
    name_as_guard,
    probability_value,
    read_guard,
    resolve_choices,
)
from .marte import (
    ANALYSIS_CONTEXTS,
    CONTEXT_TAGS,
    FILE_WIDE_CONTEXTS,
    MARTE,
    VSL_NAME,
    parse_context_parameters,
    parse_vsl_duration,
    parse_vsl_real,
    parse_vsl_size,
)
from .roles import (
    CLAUSE_ENTRY,
    CLAUSE_TAGS,
    MAIN_STEREOTYPES,
    METADATA_TAGS,
    PROBABILITY_TAGS,
    ROLE_TAGS,
    ROLES,
    TAG_SYNONYMS,
    role_of,
    tag_key,
)
from .sidecar import (
    Sidecar,
    expression_text,
    load_sidecar,
    normalised_tags,
    probability_text,
    with_suggestion,
)
from .variables import unique_variables

# --------------------------------------------------------------------------- interpretation


class _Interpreter:
    """Applies the profile and the sidecar to one model, collecting diagnostics."""

    def __init__(self, model: Model, sidecar: Sidecar | None, *, fresh: bool = False):
        self.model = model
        self.car = sidecar
        self.fresh = fresh
        self.diagnostics: list[Diagnostic] = []
        #: VSL variables (``$x``) used by the activity being interpreted -> where first seen
        self.vsl_used: dict[str, Location] = {}
        self.vsl_by_activity: list[tuple[str, dict[str, Location]]] = []
        self.activity_ids: frozenset[str] | None = None
        #: ``node_spec`` results by the node's stereotype applications: a large model repeats a
        #: handful of distinct applications (same stereotype, same tags) thousands of times, and
        #: their interpretation depends on nothing else unless it warns or records a VSL variable
        self.spec_memo: dict[tuple[StereotypeApplication, ...], tuple[PerfSpec | None, str | None]] = {}
        #: the same results by the identity of the applications' tuple, which the reader shares among
        #: the nodes with the same applications: looking a tuple up by value hashes each application
        #: (a Python-level dataclass ``__hash__``) on every node; by ``id`` it costs a dictionary
        #: lookup.  Each entry keeps its tuple, so no other object can take that id while it stands.
        self.spec_by_identity: dict[
            int, tuple[tuple[StereotypeApplication, ...], tuple[PerfSpec | None, str | None]]
        ] = {}
        self.vsl_seen = False
        #: sidecar keys naming both a node and a flow -> the kind they apply to ("none": neither)
        self.sidecar_targets: dict[str, str] = {}
        #: names and ids of the model's nodes and flows, for "did you mean"
        self.sidecar_names: list[str] = []

    def warn(
        self, message: str, location: Location, code: str, severity: Severity = Severity.WARNING
    ) -> None:
        self.diagnostics.append(Diagnostic(severity, message, location, code=code))

    # ------------------------------------------------------------------ stereotypes -> PerfSpec

    def own_spec(
        self, stereotypes: Iterable[StereotypeApplication], owner: str, location: Location
    ) -> PerfSpec | None:
        """The PerfSpec from our own profile, first role stereotype wins.

        ``clause+`` is the exception: beside another role stereotype (a test
        action that is also ``send+``, or ``action+`` with its cost) it does
        not compete for the role but adds its ``guard``/``probability``.
        """
        first: PerfSpec | None = None
        clause: PerfSpec | None = None
        first_seen: tuple[str, tuple[tuple[str, str], ...]] | None = None
        for stereotype in stereotypes:
            entry = role_of(stereotype.name)
            if entry is None:
                continue
            is_clause = entry is CLAUSE_ENTRY
            if (clause if is_clause else first) is not None:
                if not is_clause and first_seen is not None:
                    self.refuse_second_role(stereotype, first_seen, owner, location)
                continue
            if not is_clause:
                first_seen = (normalise_name(stereotype.name), normalised_tags(stereotype.tags))
            role, known = entry
            tags: dict[str, str] = {}
            for name, value in stereotype.tags:
                key = tag_key(name)
                if key not in known:
                    self.warn(
                        f"unknown tag {name!r} on {normalise_name(stereotype.name)} of {owner!r}; "
                        + with_suggestion(f"known: {', '.join(known)}", key, known),
                        location,
                        "unknown-tag",
                        Severity.ERROR,  # a misspelt tag would silently lose a cost: stop here
                    )
                    continue
                value = value.strip()
                if value and key in tags and tags[key] != value:
                    self.warn(
                        f"{normalise_name(stereotype.name)} of {owner!r} gives {key!r} twice "
                        f"({tags[key]!r} and {value!r})",
                        location,
                        "conflicting-tag",
                        Severity.ERROR,
                    )
                if value and key not in tags:
                    tags[key] = value
            if key_is_else(tags.get("guard")):
                tags["guard"] = "True"  # an else clause: always true where it stands
            spec = PerfSpec(role, tuple(tags.items()), "profile")
            if is_clause:
                clause = spec
            else:
                first = spec
        if clause is None or first is None:
            return first or clause
        extra = tuple((k, v) for k, v in clause.tags if k in CLAUSE_TAGS and first.get(k) is None)
        return PerfSpec(first.role, first.tags + extra, first.origin) if extra else first

    def refuse_second_role(
        self,
        stereotype: StereotypeApplication,
        first: tuple[str, tuple[tuple[str, str], ...]],
        owner: str,
        location: Location,
    ) -> None:
        """A second performance stereotype on one element is an error unless it repeats the first exactly.

        Which of two disagreeing applications a tool writes first is arbitrary:
        using one and dropping the other would silently predict the wrong thing.
        """
        second = (normalise_name(stereotype.name), normalised_tags(stereotype.tags))
        if second == first:
            return

        def shown(app: tuple[str, tuple[tuple[str, str], ...]]) -> str:
            return app[0] + "(" + ", ".join(f"{k}={v}" for k, v in app[1]) + ")"

        self.warn(
            f"{owner!r} carries two performance stereotypes that disagree: "
            f"{shown(first)} and {shown(second)}",
            location,
            "conflicting-stereotypes",
            Severity.ERROR,
        )

    def marte_tags(
        self, stereotypes: Iterable[StereotypeApplication], owner: str, location: Location
    ) -> list[tuple[str, str]]:
        tags: list[tuple[str, str]] = []
        for stereotype in stereotypes:
            table = MARTE.get(normalise_name(stereotype.name))
            if table is None:
                continue
            for name, value in stereotype.tags:
                target = table.get(normalise_name(name))
                if target is None or not value.strip():
                    continue
                key, convert = target
                if "$" in value:
                    self.vsl_seen = True
                    for name in re.findall(VSL_NAME, value):
                        self.vsl_used.setdefault(name, location)
                try:
                    converted = convert(value)
                except ValueError as exc:
                    self.warn(
                        f"{stereotype.name}.{name} of {owner!r}: {exc}; value {value!r} ignored",
                        location,
                        "bad-vsl",
                    )
                    continue
                if all(k != key for k, _ in tags):
                    tags.append((key, converted))
        return tags

    def node_spec(self, node: Node) -> tuple[PerfSpec | None, str | None]:
        """``(perf, marte_probability)`` for a node from its stereotypes.

        Memoised by the applications (see ``spec_memo``); a result that warned
        (the message names the node) or used a VSL variable (recorded per
        activity) is computed afresh each time.
        """
        applied = node.stereotypes
        same = self.spec_by_identity.get(id(applied))
        if same is not None and same[0] is applied:
            return same[1]
        memo = self.spec_memo.get(applied)
        if memo is not None:
            if len(self.spec_by_identity) < 4096:
                self.spec_by_identity[id(applied)] = (applied, memo)
            return memo
        warnings = len(self.diagnostics)
        self.vsl_seen = False
        result = self._node_spec(node)
        # bounded: a file of all-different applications gains nothing from the memo and should not grow it
        if len(self.diagnostics) == warnings and not self.vsl_seen and len(self.spec_memo) < 4096:
            self.spec_memo[applied] = result
            self.spec_by_identity[id(applied)] = (applied, result)
        return result

    def _node_spec(self, node: Node) -> tuple[PerfSpec | None, str | None]:
        owner = node.name or node.id
        spec = self.own_spec(node.stereotypes, owner, node.location)
        marte = self.marte_tags(node.stereotypes, owner, node.location)
        mapped_role: Role | None = None
        mapped: list[tuple[str, str]] = []
        if self.car is not None and self.car.tags:
            mapped_role, mapped = self.mapped_tags(node.stereotypes)
        probability = next((v for k, v in (*marte, *mapped) if k == "probability"), None)
        extra = [(k, v) for k, v in marte if k != "probability"]
        extra += [(k, v) for k, v in mapped if k != "probability" and all(k != m for m, _ in extra)]
        if spec is None:
            if extra or mapped_role is not None:
                role = mapped_role or Role.ACTION
                known = ROLE_TAGS[role]
                origin = "marte" if len(marte) > (probability is not None) or not mapped else "sidecar"
                spec = PerfSpec(role=role, tags=tuple((k, v) for k, v in extra if k in known), origin=origin)
            else:
                spec = _plain_tagged_values(node.stereotypes)
        elif extra:
            # MARTE and mapped tags fill what our stereotype leaves open (a send+ with a msgSize)
            known = ROLE_TAGS[spec.role]
            filled = tuple((k, v) for k, v in extra if k in known and spec.get(k) is None)
            if filled:
                spec = PerfSpec(spec.role, spec.tags + filled, spec.origin)
        return spec, probability

    # ------------------------------------------------------------------ sidecar

    def sidecar_entry(self, kind: str, *keys: str) -> tuple[str, dict[str, object]] | None:
        """The sidecar entry of a node (``kind`` "node") or flow ("flow") by id or name, if any.

        A name that both a node and a flow carry applies only to the kind its
        tags fit (see :meth:`prepare_sidecar`).
        """
        if self.car is None:
            return None
        for key in keys:
            if key and key in self.car.elements:
                target = self.sidecar_targets.get(key)
                if target is not None and target != kind:
                    continue
                self.car.used.add(key)
                return key, self.car.elements[key]
        return None

    def prepare_sidecar(self) -> None:
        """Match sidecar entries against the model before using them.

        An entry whose name is both a node's and a flow's (an action "Transfer"
        and the flow "Transfer" into it) applies to the one its tags fit
        (``probability``/``guard`` fit a flow, anything else a node), with a
        warning asking for the id; when its tags fit both or neither it is an
        error asking for the id.  Entries naming nothing get "did you mean".
        """
        assert self.car is not None
        node_names: dict[str, list[Node]] = {}
        flow_names: dict[str, list[Edge]] = {}
        ids: set[str] = set()
        regions = [a.region for a in self.model.activities]
        while regions:
            region = regions.pop()
            for node in region.nodes:
                ids.add(node.id)
                if node.name:
                    node_names.setdefault(node.name, []).append(node)
                if node.region is not None:
                    regions.append(node.region)
            for edge in region.edges:
                ids.add(edge.id)
                if edge.name:
                    flow_names.setdefault(edge.name, []).append(edge)
        self.sidecar_names = sorted(ids | set(node_names) | set(flow_names))
        for key, entry in self.car.elements.items():
            if key in ids or key not in node_names or key not in flow_names:
                continue
            node, edge = node_names[key][0], flow_names[key][0]
            tags = {TAG_SYNONYMS.get(normalise_name(k), normalise_name(k)) for k in entry}
            flow_like = tags <= {"probability", "guard"} and bool(tags)
            node_like = not tags & {"probability", "guard"}
            both = (
                f"[elements.{key!r}] names both {node.uml_type} {key!r} (xmi:id={node.id}) "
                f"and flow {key!r} (xmi:id={edge.id})"
            )
            ask = (
                f'use the id: [elements."{node.id}"] for the {node.uml_type}, '
                f'[elements."{edge.id}"] for the flow'
            )
            if flow_like == node_like:
                self.car.problem(both + ": which one is meant cannot be told from its tags", hint=ask)
                self.sidecar_targets[key] = "none"
                continue
            target = "flow" if flow_like else "node"
            self.sidecar_targets[key] = target
            fits = "flow" if flow_like else node.uml_type
            self.diagnostics.append(
                Diagnostic(
                    Severity.WARNING,
                    both + f"; its tags fit the {fits}, so they are applied to the {fits} only",
                    Location(file=self.car.path),
                    ask,
                    "sidecar-ambiguous",
                )
            )

    def mapped_tags(
        self, stereotypes: Iterable[StereotypeApplication]
    ) -> tuple[Role | None, list[tuple[str, str]]]:
        """Tags of other profiles read as ours through the sidecar's ``[tags]`` (units converted)."""
        assert self.car is not None
        role: Role | None = None
        found: list[tuple[str, str]] = []
        table = self.car.tags
        for stereotype in stereotypes:
            name = normalise_name(stereotype.name.rpartition("::")[2])
            if role_of(stereotype.name) is not None:
                continue  # our own stereotypes read their tags themselves
            for tag, value in stereotype.tags:
                tag_name = normalise_name(tag)
                target = table.get((name, tag_name)) or table.get(("", tag_name))
                if target is None or not value.strip():
                    continue
                role_name, key = target
                convert = _MAPPED_UNITS.get(key)
                try:
                    converted = convert(value) if convert is not None else value.strip()
                except ValueError as exc:
                    self.car.problem(
                        f"[tags] maps {stereotype.name}.{tag} to {key!r}, but the value {value!r} "
                        f"cannot be read: {exc}",
                        hint="write a number with a unit (50s, 3 ms) or an expression",
                    )
                    continue
                if role_name is not None and role is None:
                    role = ROLES[role_name][0]
                if all(k != key for k, _ in found):
                    found.append((key, converted))
        return role, found

    def apply_sidecar_node(self, node: Node, spec: PerfSpec | None) -> PerfSpec | None:
        found = self.sidecar_entry("node", node.id, node.name)
        if found is None:
            return spec
        key, entry = found
        assert self.car is not None
        role: Role | None = None
        known: tuple[str, ...] = ()
        if "stereotype" in entry:
            stereo = normalise_name(str(entry["stereotype"]))
            if stereo not in ROLES:
                self.car.problem(
                    f"[elements.{key!r}] stereotype {entry['stereotype']!r} is not a uml2perf stereotype",
                    hint=with_suggestion("known: " + ", ".join(ROLES), stereo, ROLES),
                )
            else:
                role, known = ROLES[stereo]  # clause+ shares action+'s role but has tags of its own
        if role is None:
            role = spec.role if spec is not None else _default_role(node.kind)
            known = ROLE_TAGS[role]
        base = dict(spec.tags) if spec is not None and spec.role is role else {}
        for name, value in entry.items():
            if name == "stereotype":
                continue
            tag = TAG_SYNONYMS.get(normalise_name(name), normalise_name(name))
            if tag not in known:
                self.car.problem(
                    f"unknown key {name!r} in [elements.{key!r}] for role {role.value}",
                    hint=with_suggestion("known: stereotype, " + ", ".join(known), name, known),
                )
                continue
            drawn = base.get(tag)
            base[tag] = expression_text(value, self.car, f"elements.{key}.{name}")
            if tag in ("cost", "time") and drawn is not None and drawn != base[tag]:
                self.warn(
                    f"the sidecar's {tag} {base[tag]!r} ([elements.{key!r}]) replaces the {tag} {drawn!r} "
                    "drawn in the model",
                    node.location,
                    "sidecar-replaces",
                )
        if key_is_else(base.get("guard")):
            base["guard"] = "True"  # an else clause: always true where it stands
        return PerfSpec(role=role, tags=tuple(base.items()), origin="sidecar")

    def runs_as_action(self, node: Node) -> bool:
        """Actions, and calls of behaviours this file does not hold (they run as plain actions)."""
        if node.kind is NodeKind.CALL and self.activity_ids is None:
            self.activity_ids = frozenset(a.id for a in self.model.activities)
        return runs_as_action(node, self.activity_ids or frozenset())

    def apply_sidecar_edge(self, edge: Edge) -> Edge:
        found = self.sidecar_entry("flow", edge.id, edge.name)
        if found is None:
            return edge
        key, entry = found
        assert self.car is not None
        probability, guard = edge.probability, edge.guard
        for name, value in entry.items():
            tag = normalise_name(name)
            if tag in PROBABILITY_TAGS:
                probability = probability_text(value, self.car, f"elements.{key}.{name}")
            elif tag == "guard":
                guard = expression_text(value, self.car, f"elements.{key}.{name}")
            else:
                self.car.problem(
                    f"unknown key {name!r} in [elements.{key!r}] for a flow",
                    hint=with_suggestion("known: probability, guard", name, ("probability", "guard")),
                )
        return edge.replace(probability=probability, guard=guard)

    # ------------------------------------------------------------------ regions

    def region(self, region: Region, clause_nodes: frozenset[str] = frozenset()) -> Region:
        """Interpret every node and flow of a region.

        A MARTE ``prob`` belongs on the flow entering its step from a decision;
        in a ConditionalNode (``clause_nodes``: ids of its clauses' tests and
        bodies) it is the probability of the step's clause instead, kept as
        the step's ``probability`` tag for navigation.
        """
        nodes: list[Node] = []
        node_probability: dict[str, tuple[str, Node]] = {}
        changed = False  # whether any node or flow is a new object (never when the model is fresh)
        for node in region.nodes:
            new_node, probability = self.node(node)
            nodes.append(new_node)
            changed = changed or new_node is not node
            if probability is not None:
                node_probability[node.id] = (probability, new_node)
        plain = self.car is None
        flows = region.flows
        if plain and not node_probability and flows is not None and flows.quiet:
            # every flow is a plain row: no guard, no stereotype, nothing to place on it
            return _with_nodes(region, tuple(nodes)) if changed else region
        kinds = {n.id: n.kind for n in nodes} if node_probability else {}
        edges: list[Edge] = []
        placed: set[str] = set()
        for edge in region.edges:
            if plain and edge.guard is None and not edge.stereotypes and edge.target not in node_probability:
                edges.append(edge)  # nothing to interpret
                continue
            probability = edge.probability or self.edge_probability(edge)
            if (
                probability is None
                and edge.target in node_probability
                and kinds.get(edge.source) is NodeKind.DECISION
            ):
                probability = node_probability[edge.target][0]
                placed.add(edge.target)
            new_edge = edge.replace(probability=probability) if probability != edge.probability else edge
            if new_edge.guard is None and edge.stereotypes and self.car is not None and self.car.tags:
                guard = next((v for k, v in self.mapped_tags(edge.stereotypes)[1] if k == "guard"), None)
                if guard is not None:
                    new_edge = new_edge.replace(guard=guard)  # a mapped tag of another profile
            new_edge = self.apply_sidecar_edge(new_edge)
            edges.append(new_edge)
            changed = changed or new_edge is not edge
        for node_id, (_prob, node) in node_probability.items():
            if node_id not in placed and node_id in clause_nodes:
                index = next(i for i, n in enumerate(nodes) if n.id == node_id)
                nodes[index] = _with_tag(nodes[index], "probability", _prob)
                changed = True
            elif node_id not in placed:
                self.warn(
                    f"branch probability on {node.name or node.id!r} ignored: "
                    "no flow enters it from a decision",
                    node.location,
                    "unplaced-probability",
                    Severity.INFO,
                )
        return Region(nodes=tuple(nodes), edges=tuple(edges)) if changed else region

    def edge_probability(self, edge: Edge) -> str | None:
        if self.car is not None and self.car.tags:
            _role, mapped = self.mapped_tags(edge.stereotypes)
            for key, value in mapped:
                if key == "probability":
                    return value
        for stereotype in edge.stereotypes:
            for name, value in stereotype.tags:
                if normalise_name(name) in PROBABILITY_TAGS and value.strip():
                    for variable in re.findall(VSL_NAME, value):
                        self.vsl_used.setdefault(variable, edge.location)
                    try:
                        return parse_vsl_real(value)
                    except ValueError:
                        return value.strip()
        return None

    def node(self, node: Node) -> tuple[Node, str | None]:
        if not node.stereotypes and self.car is None and node.region is None and node.code is None:
            return node, None  # nothing to interpret: most nodes of a plain export
        spec, probability = self.node_spec(node)
        if self.car is not None:
            spec = self.apply_sidecar_node(node, spec)
            if spec is None and "cost" in self.car.defaults and self.runs_as_action(node):
                spec = PerfSpec(
                    role=Role.ACTION, tags=(("cost", self.car.defaults["cost"]),), origin="default"
                )
            elif spec is not None and spec.role is Role.ACTION and spec.get("cost") is None:
                if "cost" in self.car.defaults:
                    spec = replace(spec, tags=spec.tags + (("cost", self.car.defaults["cost"]),))
        code = node.code
        if spec is not None:
            tag_code = spec.get("code")
            if (
                tag_code is not None
                and code is not None
                and (plain_assignments(tag_code) or tag_code) != code
            ):
                self.warn(
                    f"{node.name or node.id!r} has both a code tag and an opaque body; the code tag is used",
                    node.location,
                    "code-conflict",
                )
            if tag_code is not None:
                code = plain_assignments(tag_code) or tag_code
                spec = replace(spec, tags=tuple((k, code if k == "code" else v) for k, v in spec.tags))
            elif code is not None and spec.role is Role.ACTION:
                spec = replace(spec, tags=spec.tags + (("code", code),))
        region = self.region(node.region, _clause_members(node)) if node.region is not None else None
        if spec is node.perf and code == node.code and region is node.region:
            return node, probability
        if self.fresh:
            # the reader built this node a moment ago and nobody else has seen it (see apply_profile)
            node.perf, node.code, node.region = spec, code, region
            return node, probability
        return node.replace(perf=spec, code=code, region=region), probability

    # ------------------------------------------------------------------ activities

    def activity(self, activity: Activity) -> Activity:
        owner = activity.name or activity.id
        spec = self.own_spec(activity.stereotypes, owner, activity.location)
        is_main = activity.is_main or any(
            normalise_name(s.name) in MAIN_STEREOTYPES for s in activity.stereotypes
        )
        entry = None
        if self.car is not None:
            for key in (activity.id, activity.name):
                if key and key in self.car.activities:
                    self.car.used.add("activities." + key)
                    entry = (key, self.car.activities[key])
                    break
        if entry is not None:
            assert self.car is not None
            key, table = entry
            known = ROLES["activity+"][1]
            tags = dict(spec.tags) if spec is not None else {}
            for name, value in table.items():
                tag = normalise_name(name)
                if tag == "main":
                    if not isinstance(value, bool):
                        self.car.problem(
                            f"activities.{key}.{name} is {value!r}: it must be true or false",
                            hint="write main = true (without quotes)",
                        )
                    is_main = value is True
                elif tag in known:
                    tags[tag] = expression_text(value, self.car, f"activities.{key}.{name}")
                else:
                    self.car.problem(
                        f"unknown key {name!r} in [activities.{key!r}]",
                        hint=with_suggestion("known: main, " + ", ".join(known), name, ("main", *known)),
                    )
            spec = (
                PerfSpec(role=Role.ACTIVITY, tags=tuple(tags.items()), origin="sidecar")
                if tags or spec
                else spec
            )
        self.vsl_used = {}
        region = self.region(activity.region)
        self.vsl_by_activity.append((activity.id, self.vsl_used))
        declared = {v.name for v in activity.attributes}
        extra = unique_variables(
            v
            for v in self.context_variables(activity.stereotypes, owner, activity.location)
            if v.name not in declared
        )
        attributes = activity.attributes + extra
        return replace(activity, region=region, perf=spec, is_main=is_main, attributes=attributes)

    # ------------------------------------------------------------------ variables

    def context_variables(
        self, stereotypes: Iterable[StereotypeApplication], owner: str, location: Location
    ) -> list[Variable]:
        """Variables declared by the input parameters of MARTE analysis contexts."""
        found: list[Variable] = []
        for stereotype in stereotypes:
            if normalise_name(stereotype.name) not in ANALYSIS_CONTEXTS:
                continue
            for tag, value in stereotype.tags:
                if normalise_name(tag) not in CONTEXT_TAGS or not value.strip():
                    continue
                try:
                    parameters = parse_context_parameters(value)
                except ValueError as exc:
                    self.warn(
                        f"{stereotype.name}.{tag} of {owner!r}: {exc}; ignored", location, "bad-context"
                    )
                    continue
                for parameter in parameters:
                    if parameter.direction == "out":
                        continue  # a result the analysis computes, not an input of the model
                    found.append(
                        Variable(
                            parameter.name, location, None, parameter.value, None, parameter.value is None
                        )
                    )
        return found

    def file_wide_variables(self) -> tuple[Variable, ...]:
        """Parameters of analysis contexts applied to the model, a package or a class."""
        found: list[Variable] = []
        for element in self.model.annotations:
            if not any(normalise_name(s.name) in ANALYSIS_CONTEXTS for s in element.stereotypes):
                continue
            owner = element.name or element.element_id
            if element.metaclass not in FILE_WIDE_CONTEXTS:
                self.warn(
                    f"analysis context on {element.metaclass} {owner!r}, which is not an activity: "
                    "its parameters are not used",
                    element.location,
                    "unused-context",
                    Severity.INFO,
                )
                continue
            found.extend(self.context_variables(element.stereotypes, owner, element.location))
        return unique_variables(found)

    def declare_vsl_variables(self, activities: list[Activity], declared: set[str]) -> None:
        """Declare ``$x`` names used in MARTE values but declared nowhere, as variables without a value."""
        position = {a.id: i for i, a in enumerate(activities)}
        for activity_id, used in self.vsl_by_activity:
            missing = [name for name in used if name not in declared]
            if not missing:
                continue
            index = position[activity_id]
            activity = activities[index]
            added = tuple(Variable(name, used[name], None, None, None, True) for name in missing)
            declared.update(missing)
            activities[index] = replace(activity, attributes=activity.attributes + added)
            self.warn(
                "VSL variable(s) "
                + ", ".join(f"${n}" for n in missing)
                + f" used in {activity.name or activity.id!r} but declared by no analysis context: "
                "they become variables without a value",
                used[missing[0]],
                "vsl-variable",
                Severity.INFO,
            )

    def apply_variables(
        self, activities: list[Activity], globals_: tuple[Variable, ...]
    ) -> tuple[Variable, ...]:
        """Give the sidecar's ``[variables]`` values to the variables of those names (declaring others)."""
        assert self.car is not None
        values = {
            name: expression_text(value, self.car, f"variables.{name}")
            for name, value in self.car.variables.items()
        }
        if not values:
            return globals_
        matched: set[str] = set()
        sidecar_path = self.car.path

        def give(variables: tuple[Variable, ...]) -> tuple[Variable, ...]:
            if not any(v.name in values for v in variables):
                return variables
            result = []
            for variable in variables:
                if variable.name in values:
                    matched.add(variable.name)
                    # the value is the sidecar's: a problem with it is reported there
                    where = Location(file=sidecar_path, name=f"variables.{variable.name}", uml_type="sidecar")
                    variable = replace(
                        variable, default=values[variable.name], required=False, location=where
                    )
                result.append(variable)
            return tuple(result)

        for index, activity in enumerate(activities):
            attributes, local = give(activity.attributes), give(activity.variables)
            if attributes is not activity.attributes or local is not activity.variables:
                activities[index] = replace(activity, attributes=attributes, variables=local)
        globals_ = give(globals_)
        where = Location(file=self.car.path)
        self.warn_near_miss_variables(set(values) - matched, activities, globals_, where)
        return globals_ + tuple(
            Variable(name, where, None, value) for name, value in values.items() if name not in matched
        )

    def warn_near_miss_variables(
        self, unmatched: set[str], activities: list[Activity], globals_: tuple[Variable, ...], where: Location
    ) -> None:
        """A sidecar variable that only differs from a model variable in case (or a typo) is a warning.

        It still becomes a new variable (a sidecar may declare variables), but
        one that nothing reads is almost always a misspelt name whose value
        would be silently ignored.
        """
        if not unmatched:
            return
        import difflib

        known = {v.name for v in globals_}
        for activity in activities:
            known.update(v.name for v in activity.attributes)
            known.update(v.name for v in activity.variables)
        by_case = {name.casefold(): name for name in known}
        for name in sorted(unmatched):
            close = by_case.get(name.casefold()) or next(
                iter(difflib.get_close_matches(name, known, 1, 0.8)), None
            )
            if close is not None and close != name:
                self.warn(
                    f"sidecar [variables] {name!r} matches no model variable; did you mean {close!r}? "
                    f"(names are case-sensitive: the model keeps its own value of {close!r})",
                    where,
                    "sidecar-variable-near-miss",
                )

    def warn_unread_globals(
        self, activities: list[Activity], functions: tuple[CostFunction, ...], globals_: tuple[Variable, ...]
    ) -> None:
        """A sidecar ``[globals]`` name that no text of the model reads is most likely a typing mistake."""
        import re

        from ..model import walk_region

        assert self.car is not None
        texts: list[str] = [f.body for f in functions]
        texts += [v.default for v in globals_ if v.default]
        for activity in activities:
            texts += [v.default for v in (*activity.attributes, *activity.variables) if v.default]
            texts += [value for _, value in (activity.perf.tags if activity.perf else ())]
            regions = [activity.region] + [n.region for n in walk_region(activity.region) if n.region]
            for node in walk_region(activity.region):
                texts += [node.code] if node.code else []
                texts += [value for _, value in (node.perf.tags if node.perf else ())]
            for region in regions:
                texts += [t for edge in region.edges for t in (edge.guard, edge.probability, edge.name) if t]
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(texts)))
        for name in self.car.globals:
            if name not in words:
                self.warn(
                    f"sidecar [globals] {name!r} is read by no cost, guard, code fragment or function "
                    "of the model",
                    Location(file=self.car.path, name=f"globals.{name}", uml_type="sidecar"),
                    "sidecar-unread-global",
                )

    # ------------------------------------------------------------------ whole model

    def run(self) -> Model:
        if self.car is not None:
            self.prepare_sidecar()
        activities = [self.activity(a) for a in self.model.activities]
        functions = self.model.functions
        known = {v.name for v in self.model.globals}
        globals_ = self.model.globals + tuple(v for v in self.file_wide_variables() if v.name not in known)
        if self.car is not None:
            self.check_unused()
            functions = functions + self.sidecar_functions()
            globals_ = globals_ + self.sidecar_globals()
        if any(used for _, used in self.vsl_by_activity):
            declared = {v.name for v in globals_}
            for activity in activities:
                declared.update(v.name for v in activity.attributes)
                declared.update(v.name for v in activity.variables)
            if self.car is not None:
                declared.update(self.car.variables)
            self.declare_vsl_variables(activities, declared)
        if self.car is not None:
            globals_ = self.apply_variables(activities, globals_)
        if self.car is not None:
            self.car.raise_problems()
        self.settle_guards(activities, globals_, functions)
        if self.car is not None and self.car.globals:
            self.warn_unread_globals(activities, functions, globals_)
        return replace(
            self.model,
            activities=tuple(activities),
            functions=functions,
            globals=globals_,
            diagnostics=self.model.diagnostics + tuple(self.diagnostics),
        )

    # ------------------------------------------------------------------ guards

    def settle_guards(
        self, activities: list[Activity], globals_: tuple[Variable, ...], functions: tuple[CostFunction, ...]
    ) -> None:
        """Read every guard once (expression, probability or prose) and settle each node's choice.

        Runs after everything else, when the model's variables are final; see
        :mod:`uml2perf.profile.guards` for the rules.
        """
        names: frozenset[str] | None = None
        function_names = frozenset(f.name for f in functions)

        def known() -> frozenset[str]:
            nonlocal names
            if names is None:
                names = known_names(_variable_names(activities, globals_))
            return names

        for index, activity in enumerate(activities):
            region = self.guard_region(activity.region, known, function_names)
            if region is not activity.region:
                activities[index] = replace(activity, region=region)

    def guard_region(
        self, region: Region, known: Callable[[], frozenset[str]], functions: frozenset[str]
    ) -> Region:
        nodes = region.nodes
        new_nodes: list[Node] | None = None
        for index, node in enumerate(nodes):
            if node.region is None:
                continue
            inner = self.guard_region(node.region, known, functions)
            if inner is not node.region:
                if new_nodes is None:
                    new_nodes = list(nodes)
                new_nodes[index] = node.replace(region=inner)
        flows = region.flows
        if flows is not None and flows.quiet:
            # the reader's plain rows: no guard, no probability; only a name can make a choice
            named = flows.names() if flows.named else ()
            wanted = _choice_sources(((False, source, name) for source, name in named), nodes)
        else:
            wanted = _choice_sources(
                ((e.guard is not None or e.probability is not None, e.source, e.name) for e in region.edges),
                nodes,
            )
        new_edges: list[Edge] | None = None
        if wanted:
            edges = region.edges
            by_source: dict[str, list[Edge]] = {}
            for edge in edges:
                if edge.source in wanted:
                    by_source.setdefault(edge.source, []).append(edge)
            by_id = {n.id: n for n in nodes}
            changed: dict[str, Edge] = {}
            for source, outgoing in by_source.items():
                changed.update(self.guard_choice(by_id.get(source), outgoing, known, functions))
            if changed:
                new_edges = [changed.get(e.id, e) for e in edges]
        if new_nodes is None and new_edges is None:
            return region
        if new_edges is None:
            return _with_nodes(region, tuple(new_nodes))  # type: ignore[arg-type]
        return Region(nodes=tuple(new_nodes) if new_nodes is not None else nodes, edges=tuple(new_edges))

    def guard_choice(
        self,
        source: Node | None,
        outgoing: list[Edge],
        known: Callable[[], frozenset[str]],
        functions: frozenset[str],
    ) -> dict[str, Edge]:
        is_decision = source is not None and source.kind is NodeKind.DECISION
        all_bare = all(e.guard is None and e.probability is None for e in outgoing)

        def read(edge: Edge) -> tuple[GuardReading | None, str]:
            if edge.guard is not None:
                return read_guard(edge.guard, known(), functions), "guard"
            if edge.probability is None and edge.name:
                reading = name_as_guard(
                    edge.name,
                    known(),
                    functions,
                    from_decision=is_decision and all_bare and len(outgoing) > 1,
                )
                return reading, "name"
            return None, "guard"

        owner = (source.name or source.kind.value) if source is not None else outgoing[0].source
        variables = sorted(known() - frozenset(SYSTEM_PARAMETERS))
        choice = resolve_choices(
            source.kind if source is not None else None,
            owner,
            source.location if source is not None else outgoing[0].location,
            outgoing,
            read,
            variables[:1] or ["x"],
        )
        self.diagnostics.extend(choice.diagnostics)
        return choice.edges

    def check_unused(self) -> None:
        assert self.car is not None
        for key in self.car.elements:
            if key not in self.car.used and self.sidecar_targets.get(key) != "none":
                self.car.problem(
                    f"[elements.{key!r}] names no node or flow of {Path(self.model.source).name}",
                    hint=with_suggestion(
                        "use an element's name or xmi:id exactly as in the model", key, self.sidecar_names
                    ),
                )
        for key in self.car.activities:
            if "activities." + key not in self.car.used:
                names = ", ".join(repr(a.name or a.id) for a in self.model.activities) or "none"
                known = [a.name for a in self.model.activities if a.name] + [
                    a.id for a in self.model.activities
                ]
                self.car.problem(
                    f"[activities.{key!r}] names no activity of {Path(self.model.source).name}",
                    hint=with_suggestion(f"activities: {names}", key, known),
                )

    def sidecar_functions(self) -> tuple[CostFunction, ...]:
        assert self.car is not None
        result: list[CostFunction] = []
        where = Location(file=self.car.path)
        for name, value in self.car.functions.items():
            if isinstance(value, dict):
                unknown = set(value) - {"parameters", "body"}
                if unknown or "body" not in value:
                    self.car.problem(
                        f"[functions] {name!r} needs 'body' (and optional 'parameters')",
                        hint=" ".join(
                            with_suggestion(f"unexpected: {k!r}", k, ("parameters", "body"))
                            for k in sorted(unknown)
                        )
                        or None,
                    )
                    continue
                params = value.get("parameters", [])
                if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
                    self.car.problem(f"[functions] {name!r}: parameters must be a list of names")
                    continue
                body = expression_text(value["body"], self.car, f"functions.{name}.body")
                result.append(CostFunction(name, tuple(params), body, where, "python"))
            else:
                result.append(
                    CostFunction(
                        name, (), expression_text(value, self.car, f"functions.{name}"), where, "python"
                    )
                )
        return tuple(result)

    def sidecar_globals(self) -> tuple[Variable, ...]:
        assert self.car is not None
        where = Location(file=self.car.path)
        return tuple(
            Variable(name, where, None, expression_text(value, self.car, f"globals.{name}"))
            for name, value in self.car.globals.items()
        )


#: Our tags whose mapped values may carry a unit (``50s``, ``3 ms``, ``4 KB``), as MARTE values do.
_MAPPED_UNITS: dict[str, Callable[[str], str]] = {
    "cost": parse_vsl_duration,
    "overhead": parse_vsl_duration,
    "startup": parse_vsl_duration,
    "size": parse_vsl_size,
    "bytes": parse_vsl_size,
    "footprint": parse_vsl_size,
    "fresh": parse_vsl_size,
    "allocation": parse_vsl_size,
    "copyin": parse_vsl_size,
    "copyout": parse_vsl_size,
    "probability": probability_value,
    "repeat": parse_vsl_real,
}


def _variable_names(activities: Iterable[Activity], globals_: Iterable[Variable]) -> set[str]:
    """Every variable of the model: globals, activity attributes and locals, names code fragments assign."""
    from ..errors import Uml2PerfError
    from ..expressions import parse_code
    from ..model import walk_region

    names = {v.name for v in globals_}
    for activity in activities:
        names.update(v.name for v in activity.attributes)
        names.update(v.name for v in activity.variables)
        for node in walk_region(activity.region):
            texts = [node.code] if node.code else []
            if node.perf is not None and node.perf.get("code"):
                texts.append(node.perf.get("code") or "")
            for text in texts:
                try:
                    names.update(parse_code(text, node.location).assigned)
                except Uml2PerfError:
                    pass
    return names


def key_is_else(text: str | None) -> bool:
    """Whether a guard text means "otherwise" (the expression language's words for ``else``)."""
    return means_else(text)


def _choice_sources(flows: Iterable[tuple[bool, str, str]], nodes: tuple[Node, ...]) -> set[str]:
    """The nodes whose outgoing flows make a choice to settle: a flow leaves them with a guard or a
    probability (``flows``: whether it has one, its source, its name), a name written as a guard
    (``[x > 0]``), or any name when they are decisions."""
    decisions: frozenset[str] | None = None
    wanted: set[str] = set()
    for settled, source, name in flows:
        if settled:
            wanted.add(source)
        elif name:
            name = name.strip()
            if name.startswith("[") and name.endswith("]"):
                wanted.add(source)
                continue
            if decisions is None:
                decisions = frozenset(n.id for n in nodes if n.kind is NodeKind.DECISION)
            if source in decisions:
                wanted.add(source)
    return wanted


def _with_nodes(region: Region, nodes: tuple[Node, ...]) -> Region:
    """``region`` with other nodes and the same flows (still the reader's rows if they were)."""
    flows = region.flows
    return Region(nodes, flows=flows) if flows is not None else Region(nodes, region.edges)


def _clause_members(node: Node) -> frozenset[str]:
    """Ids of the test and body nodes of a ConditionalNode's clauses (empty for any other node)."""
    if not node.clauses:
        return frozenset()
    return frozenset(ident for clause in node.clauses for ident in (*clause.test, *clause.body))


def _with_tag(node: Node, key: str, value: str) -> Node:
    """``node`` with tag ``key`` added to its PerfSpec (a MARTE-only action when it had none)."""
    perf = node.perf
    if perf is None:
        perf = PerfSpec(role=Role.ACTION, tags=((key, value),), origin="marte")
    elif perf.get(key) is None:
        perf = PerfSpec(perf.role, perf.tags + ((key, value),), perf.origin)
    else:
        return node
    return node.replace(perf=perf)


def _plain_tagged_values(stereotypes: Iterable[StereotypeApplication]) -> PerfSpec | None:
    """``cost``/``time``/``repeat``/``code`` tagged values on an element with no stereotype at all.

    UML 1.x tools (ArgoUML, Poseidon) let a user type a tagged value without
    applying a stereotype; the reader keeps those in an application with an
    empty name.  Tags of a named foreign stereotype are never read this way.
    """
    known = ROLES["action+"][1]
    for stereotype in stereotypes:
        if stereotype.name:
            continue
        tags: list[tuple[str, str]] = []
        for name, value in stereotype.tags:
            key = TAG_SYNONYMS.get(normalise_name(name), normalise_name(name))
            if key in known and key not in METADATA_TAGS and value.strip() and all(k != key for k, _ in tags):
                tags.append((key, value.strip()))
        if tags:
            return PerfSpec(role=Role.ACTION, tags=tuple(tags), origin="profile")
    return None


def _default_role(kind: NodeKind) -> Role:
    if kind in (NodeKind.CALL, NodeKind.STRUCTURED, NodeKind.CONDITIONAL):
        return Role.ACTIVITY
    if kind is NodeKind.LOOP:
        return Role.LOOP
    return Role.ACTION


def apply_profile(
    model: Model,
    sidecar: str | os.PathLike[str] | None = None,
    *,
    fresh: bool = False,
    default_cost: str | None = None,
) -> Model:
    """Interpret stereotypes (uml2perf, MARTE) and the optional TOML sidecar into ``PerfSpec``s.

    Fills ``Node.perf``, ``Node.code`` (from a ``code`` tag), ``Edge.probability``,
    ``Activity.perf`` and ``Activity.is_main``; appends warnings (unknown tags,
    unreadable VSL values) to ``Model.diagnostics``.  ``model`` is left as it
    was and a new model is returned.

    ``default_cost`` (an expression) is the cost of every action without one, as the sidecar's
    ``[defaults] cost``, which it replaces.

    ``fresh`` is for the reader alone: its model was built a moment ago and no
    one else holds it, so nodes are finished in place instead of being built a
    second time (a 20,000-action model would otherwise build every node twice).
    """
    car = load_sidecar(sidecar) if sidecar is not None else None
    if default_cost is not None:  # --default-cost: the sidecar's [defaults] cost, given on the command line
        car = car if car is not None else Sidecar(path="--default-cost")
        car.defaults["cost"] = default_cost
    return _Interpreter(model, car, fresh=fresh).run()
