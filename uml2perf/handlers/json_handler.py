"""The ``json`` content handler: the neutral model and its recovered structure as JSON.

For tools that want the model without parsing XMI: every activity with its
nodes (nested regions inside their owner) and flows as read, plus the
statement tree control-flow recovery made of it, and the diagnostics.  Keys
are sorted and lists keep file order, so the same input gives the same bytes.
``format_version`` changes whenever the layout changes incompatibly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..controlflow import recover_model
from ..controlflow.ir import (
    ActivityBody,
    Block,
    Call,
    Cond,
    Critical,
    Exec,
    For,
    If,
    Parallel,
    ParallelRegion,
    Pipeline,
    Repeat,
    Return,
    Sequence,
    StateMachine,
    Statement,
    TaskPool,
    While,
    spread,
)
from ..errors import Diagnostic
from ..model import Activity, CostFunction, Edge, Model, Node, PerfSpec, Variable
from .base import ContentHandler, GenerationJob

FORMAT_VERSION = 1


def perf_json(perf: PerfSpec | None) -> dict[str, Any] | None:
    if perf is None:
        return None
    return {"role": perf.role.value, "origin": perf.origin, "tags": [[k, v] for k, v in perf.tags]}


def variable_json(variable: Variable) -> dict[str, Any]:
    return {
        "name": variable.name,
        "id": variable.id,
        "type": variable.type_name,
        "default": variable.default,
        "line": variable.location.line,
    }


def function_json(function: CostFunction) -> dict[str, Any]:
    return {
        "name": function.name,
        "id": function.id,
        "parameters": list(function.parameters),
        "body": function.body,
        "language": function.language,
        "line": function.location.line,
    }


def cond_json(cond: Cond | None) -> dict[str, Any] | None:
    if cond is None:
        return None
    return {
        "kind": cond.kind.value,
        "text": cond.text,
        "negate": cond.negate,
        "edge": cond.edge.id if cond.edge is not None else None,
    }


def statement_json(stmt: Statement) -> dict[str, Any]:
    """One recovered statement; nodes are referred to by id."""
    out: dict[str, Any] = {"kind": stmt.kind}
    node = getattr(stmt, "node", None)
    if isinstance(node, Node):
        out["node"] = node.id
    if isinstance(stmt, Sequence):
        return {"kind": "Sequence", "body": _body(stmt)}
    if isinstance(stmt, Exec):
        if stmt.function is not None:
            out["function"] = stmt.function.name
    elif isinstance(stmt, Call):
        out["activity"] = stmt.activity.id
    elif isinstance(stmt, Block):
        out["scoped"] = stmt.scoped
    elif isinstance(stmt, If):
        out["branches"] = [{"cond": cond_json(b.cond), "body": _body(b.body)} for b in stmt.branches]
        return out
    elif isinstance(stmt, While):
        out["cond"] = cond_json(stmt.cond)
    elif isinstance(stmt, (For, Repeat)):
        out["count"] = stmt.count
    elif isinstance(stmt, Parallel):
        out["branches"] = [_body(b) for b in stmt.branches]
        return out
    elif isinstance(stmt, Pipeline):
        out["items"] = stmt.items
        out["stages"] = [_body(s) for s in stmt.stages]
        return out
    elif isinstance(stmt, ParallelRegion):
        out["threads"] = stmt.threads
    elif isinstance(stmt, Critical):
        out["name"] = stmt.name
    elif isinstance(stmt, TaskPool):
        out["threads"] = stmt.threads
        out["items"] = stmt.items
    elif isinstance(stmt, StateMachine):
        out["states"] = [
            {
                "index": state.index,
                "nodes": [n.id for n in state.nodes],
                "body": _body(state.body),
                "transitions": [{"cond": cond_json(t.cond), "target": t.target} for t in state.transitions],
            }
            for state in stmt.states
        ]
        return out
    elif isinstance(stmt, Return):
        pass
    children = stmt.children()
    if children:
        out["body"] = [statement_json(s) for child in children for s in _flat(child)]
    return out


def _flat(stmt: Statement) -> tuple[Statement, ...]:
    """A sequence's statements and a run's actions (each its ``Exec``), else the statement itself."""
    if isinstance(stmt, Sequence):
        return spread(stmt.body)
    return spread((stmt,))


def _body(seq: Sequence) -> list[dict[str, Any]]:
    return [statement_json(s) for s in spread(seq.body)]


def diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    loc = diagnostic.location
    return {
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "hint": diagnostic.hint,
        "code": diagnostic.code,
        "file": loc.file,
        "line": loc.line,
        "id": loc.element_id,
        "name": loc.name,
    }


class JsonHandler(ContentHandler):
    """Writes the neutral model (plus recovered structure) as deterministic JSON."""

    name = "json"
    suffix = ".json"
    needs = "model"
    description = "the neutral model and its recovered control flow as JSON"

    def start(self, job: GenerationJob) -> None:
        super().start(job)
        self.root: dict[str, Any] = {}
        self.containers: list[dict[str, Any]] = []

    def visit_Model(self, model: Model) -> None:
        self.root = {
            "format_version": FORMAT_VERSION,
            "source": Path(model.source).name if model.source else "",
            "dialect": model.dialect,
            "name": model.name,
            "main": self.job.main.id if self.job and self.job.main else None,
            "globals": [variable_json(v) for v in model.globals],
            "functions": [function_json(f) for f in model.functions],
            "contents": [[kind, count] for kind, count in model.contents],
            "activities": [],
        }

    def visit_Activity(self, activity: Activity) -> None:
        item = {
            "id": activity.id,
            "name": activity.name,
            "line": activity.location.line,
            "is_main": activity.is_main,
            "attributes": [variable_json(v) for v in activity.attributes],
            "variables": [variable_json(v) for v in activity.variables],
            "stereotypes": [s.name for s in activity.stereotypes],
            "perf": perf_json(activity.perf),
            "nodes": [],
            "edges": [],
        }
        self.root["activities"].append(item)
        self.containers.append(item)

    def leave_Activity(self, activity: Activity) -> None:
        self.containers.pop()

    def visit_Node(self, node: Node) -> None:
        item: dict[str, Any] = {
            "id": node.id,
            "name": node.name,
            "kind": node.kind.value,
            "uml_type": node.uml_type,
            "line": node.location.line,
            "stereotypes": [{"name": s.name, "tags": [[k, v] for k, v in s.tags]} for s in node.stereotypes],
            "perf": perf_json(node.perf),
            "code": node.code,
            "behavior": node.behavior,
            "partition": node.partition,
        }
        if node.loop is not None:
            spec = node.loop
            item["loop"] = {
                "setup": list(spec.setup),
                "test": list(spec.test),
                "body": list(spec.body),
                "tested_first": spec.tested_first,
                "decider": spec.decider,
            }
        if node.clauses:
            item["clauses"] = [
                {"test": list(c.test), "body": list(c.body), "guard": c.guard} for c in node.clauses
            ]
        self.containers[-1]["nodes"].append(item)
        if node.region is not None:
            item["nodes"] = []
            item["edges"] = []
            self.containers.append(item)

    def leave_Node(self, node: Node) -> None:
        if node.region is not None:
            self.containers.pop()

    def visit_Edge(self, edge: Edge) -> None:
        self.containers[-1]["edges"].append(
            {
                "id": edge.id,
                "source": edge.source,
                "target": edge.target,
                "kind": edge.kind,
                "name": edge.name,
                "guard": edge.guard,
                "probability": edge.probability,
                "line": edge.location.line,
            }
        )

    def finish(self) -> str:
        assert self.job is not None
        # the model is walked as drawn; the recovered control flow is written beside it
        recovered = recover_model(self.job.model, main=self.job.main)
        self.diagnostics.extend(recovered.diagnostics)
        structure: dict[str, Any] = {}
        diagnostics: list[Diagnostic] = list(self.job.model.diagnostics)
        for body in recovered.activities:
            structure[body.activity.id] = activity_structure(body)
        diagnostics.extend(recovered.diagnostics)
        self.root["structure"] = structure
        self.root["diagnostics"] = [diagnostic_json(d) for d in diagnostics]
        return json.dumps(self.root, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def activity_structure(body: ActivityBody) -> dict[str, Any]:
    return {"repeat": body.repeat, "body": _body(body.body)}
