"""Content handlers: dispatch, the Traverser with several handlers, the registry, dot and json."""

from __future__ import annotations

import json
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from builders import ModelBuilder
from test_generation import prophet_model
from test_navigation import irreducible_model

from uml2perf.controlflow import recover_model
from uml2perf.errors import UsageError
from uml2perf.generation import generate
from uml2perf.handlers import ContentHandler, available_handlers, create_handler, element_kinds, load_handler
from uml2perf.handlers.dot_handler import dot_string
from uml2perf.handlers.naming import Namer, sanitise
from uml2perf.navigation import GraphNavigator, StructureNavigator, Traverser


class Recorder(ContentHandler):
    """Counts visits per kind; prunes decisions' subtrees when asked."""

    name = "recorder"

    def __init__(self, options=None):
        super().__init__(options)
        self.seen: list[str] = []
        self.left: list[str] = []

    def visit_Node(self, node):
        self.seen.append(node.name or node.kind.value)

    def visit_Activity(self, activity):
        self.seen.append("activity " + activity.name)

    def leave_Activity(self, activity):
        self.left.append(activity.name)

    def visit_Model(self, model):
        return None

    def visit_Edge(self, edge):
        return False


class Pruner(Recorder):
    def visit_Activity(self, activity):
        super().visit_Activity(activity)
        return activity.name != "SA"


def test_dispatch_goes_from_specific_to_generic_kinds():
    model = prophet_model()
    node = model.activities[0].region.nodes[0]
    assert element_kinds(node) == ("OpaqueAction", "ActionNode", "Node")

    class Specific(Recorder):
        def visit_OpaqueAction(self, node):
            self.seen.append("opaque " + node.name)

    handler = Specific()
    Traverser(GraphNavigator(model), handler).run()
    assert "opaque SA1" in handler.seen and "SA1" not in handler.seen


def test_one_traverser_drives_several_handlers_and_pruning_is_per_handler():
    model = prophet_model()
    full, pruned = Recorder(), Pruner()
    Traverser(GraphNavigator(model), full, pruned).run()
    assert "SA1" in full.seen and "SA1" not in pruned.seen
    assert "A1" in pruned.seen
    assert full.left == ["SA", "MainActivity"]
    assert pruned.left == ["MainActivity"]


def test_unhandled_kinds_are_reported_once():
    class Partial(ContentHandler):
        name = "partial"

    handler = Partial()
    Traverser(StructureNavigator(recover_model(irreducible_model())), handler).run()
    kinds = [d.message for d in handler.diagnostics if d.code == "unhandled-kind"]
    assert any("StateMachine" in m for m in kinds)
    assert len(kinds) == len(set(kinds))


def test_registry_lists_builtins_sorted_and_loads_them():
    names = [info.name for info in available_handlers()]
    assert names == sorted(names) and {"python", "dot", "json"} <= set(names)
    assert load_handler("python").__name__ == "PythonHandler"
    assert load_handler("uml2perf.handlers.dot_handler:DotHandler").name == "dot"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nosuch", "no content handler named"),
        ("nosuch_pkg.mod:Handler", "importing nosuch_pkg.mod failed"),
        ("uml2perf.handlers.dot_handler:Missing", "has no Missing"),
        ("uml2perf.handlers.naming:sanitise", "not a content handler"),
    ],
)
def test_load_errors_are_clear(spec, message):
    with pytest.raises(UsageError, match=message):
        load_handler(spec)


def test_third_party_handler_through_an_entry_point(tmp_path, monkeypatch):
    package = tmp_path / "csvhandler"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from uml2perf.handlers import ContentHandler

            class CsvHandler(ContentHandler):
                name = "csv"
                suffix = ".csv"
                needs = "model"
                description = "nodes as CSV"

                def start(self, job):
                    super().start(job)
                    self.rows = ["id,name"]

                def visit_Node(self, node):
                    self.rows.append(f"{node.id},{node.name}")

                def visit_Edge(self, edge):
                    return False

                def finish(self):
                    return "\\n".join(self.rows) + "\\n"
            """
        )
    )
    dist = tmp_path / "csvhandler-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: csvhandler\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[uml2perf.handlers]\ncsv = csvhandler:CsvHandler\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    infos = {info.name: info for info in available_handlers()}
    assert infos["csv"].origin == "csvhandler" and infos["csv"].description == "nodes as CSV"
    out = generate(prophet_model(), "csv")
    assert out.filename == "prophet.csv" and "_n7,SA1" in out.text
    sys.modules.pop("csvhandler", None)


def test_handler_instance_and_class_are_accepted():
    assert create_handler(Recorder).name == "recorder"
    handler = Recorder()
    assert create_handler(handler) is handler


def test_a_handler_without_options_is_made_without_them_and_its_errors_surface():
    class Plain(Recorder):
        def __init__(self):
            super().__init__()

    class Broken(Recorder):
        def __init__(self, options=None):
            raise TypeError("a bug inside the handler")

    assert isinstance(create_handler(Plain, {"x": 1}), Plain)
    with pytest.raises(TypeError, match="a bug inside the handler"):
        create_handler(Broken, {"x": 1})


def test_the_older_navigator_attribute_still_chooses_the_walk():
    with pytest.warns(DeprecationWarning, match="needs = 'model'"):

        class Old(ContentHandler):
            name = "old"
            navigator = "graph"

            def visit_Node(self, node):
                pass

            def visit_Edge(self, edge):
                return False

    assert Old.needs == "model"
    assert generate(prophet_model(), Old).diagnostics == generate(prophet_model(), "dot").diagnostics


def test_containers_are_walked_quietly_and_other_kinds_reported():
    class OnlyActions(ContentHandler):
        name = "only"
        needs = "model"

        def visit_ActionNode(self, node):
            pass

    out = generate(prophet_model(), OnlyActions)
    unhandled = [d.message for d in out.diagnostics if d.code == "unhandled-kind"]
    assert not any("Model" in m or "Activity " in m for m in unhandled)
    assert any("Edge" in m or "Flow" in m for m in unhandled)


def test_a_handler_must_need_something_uml2perf_provides():
    class Odd(Recorder):
        needs = "tea"  # type: ignore[assignment]

    with pytest.raises(UsageError, match="needs 'tea'"):
        load_handler(Odd)


def test_dot_output_is_escaped_and_complete():
    b = ModelBuilder("q")
    main = b.activity('say "hi"\\', main=True)
    a = main.action('A "quoted"\nline', 1)
    d = main.decision()
    main.chain(main.initial(), a, d)
    main.flow(d, main.final(), guard='x == "1"')
    main.flow(d, main.final(), guard="else")
    text = generate(b.build(), "dot").text
    assert text.count("{") == text.count("}")
    assert dot_string('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert 'label="A \\"quoted\\"\\nline"' in text
    assert 'label="[else]"' in text
    assert "subgraph cluster_1" in text


def test_json_output_has_version_structure_and_sorted_keys():
    out = generate(irreducible_model(), "json")
    data = json.loads(out.text)
    assert data["format_version"] == 1
    activity = data["activities"][0]
    assert [n["name"] for n in activity["nodes"]][:2] == ["Start", "D"]
    structure = data["structure"][activity["id"]]["body"]
    assert [s["kind"] for s in structure] == ["Exec", "StateMachine", "Exec"]
    assert out.text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_naming_is_valid_stable_and_collision_free():
    assert sanitise("class") == "class_"
    assert sanitise("2nd step") == "_2nd_step"
    assert sanitise("Größe €") == "Groe"
    assert sanitise("") == "unnamed"
    namer = Namer({"rt"})
    first = namer.claim("A 1", "x")
    second = namer.claim("A-1", "y")
    assert (first, second) == ("A_1", "A_1_2")
    assert namer.claim("whatever", "x") == "A_1"
    assert namer.claim("rt", "z") == "rt_2"


def test_the_readme_handler_example_runs():
    """The CsvHandler of README.md ("writing a content handler") works as written."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = readme.index("class CsvHandler(ContentHandler):")
    block = readme[readme.rindex("```python", 0, start) + len("```python") : readme.index("```", start)]
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the example may still say navigator = "graph"
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - the project's own README
    out = generate(prophet_model(), namespace["CsvHandler"])
    assert out.text.startswith("id,name,kind\n") and "_n7,SA1,action" in out.text
