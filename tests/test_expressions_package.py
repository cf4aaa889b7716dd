"""The expression language as a package: one job per module, no import circles, one vocabulary.

The modules of ``uml2perf/expressions/`` import each other in one direction
only and import nothing of uml2perf but its errors; the words that mean
``else`` on a guard are defined once, in the vocabulary, and every part of
uml2perf that reads guards uses that definition.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uml2perf import expressions, profile
from uml2perf.expressions import ELSE_GUARDS, means_else, vocabulary

PACKAGE = Path(expressions.__file__).resolve().parent
MODULES = sorted(path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__")


def imports_of(module: str) -> set[str]:
    """Absolute names of every module ``module`` imports, anywhere in it (functions and TYPE_CHECKING too)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = "uml2perf.expressions" + (f".{node.module}" if node.module else "")
            elif node.level == 2:
                base = "uml2perf" + (f".{node.module}" if node.module else "")
            else:
                base = node.module or ""
            found.add(base)
            if node.level == 1 and node.module is None:
                found.update(f"uml2perf.expressions.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_every_module_holds_one_job_and_says_which() -> None:
    for module in MODULES:
        doc = importlib.import_module(f"uml2perf.expressions.{module}").__doc__
        assert doc and doc.strip(), module


def test_the_modules_import_each_other_in_one_direction() -> None:
    inside = {
        module: {
            name.rsplit(".", 1)[1] for name in imports_of(module) if name.startswith("uml2perf.expressions.")
        }
        for module in MODULES
    }
    order: list[str] = []
    remaining = dict(inside)
    while remaining:
        ready = sorted(m for m, deps in remaining.items() if deps <= set(order))
        assert ready, f"import circle among {sorted(remaining)}"
        order.extend(ready)
        for module in ready:
            del remaining[module]
    assert order.index("vocabulary") < order.index("syntax") < order.index("evaluation")


def test_the_language_uses_nothing_of_uml2perf_but_its_errors() -> None:
    for module in MODULES:
        outside = {
            name
            for name in imports_of(module)
            if name.startswith("uml2perf")
            and not name.startswith(("uml2perf.expressions", "uml2perf_runtime"))
        }
        assert outside <= {"uml2perf.errors"}, (module, outside)


def test_the_package_re_exports_what_the_rest_of_uml2perf_imports() -> None:
    used = {
        "BUILTIN_FUNCTIONS",
        "CONSTANTS",
        "ELSE_GUARDS",
        "SYSTEM_PARAMETERS",
        "constant_value",
        "is_constant",
        "means_else",
        "parse_code",
        "parse_expression",
        "parse_function_body",
        "to_python",
    }
    assert used <= set(expressions.__all__)
    for name in expressions.__all__:
        assert getattr(expressions, name) is not None, name


# ---------------------------------------------------------------------------
# The words meaning 'else' on a guard
# ---------------------------------------------------------------------------


def else_word_collections(path: Path) -> list[int]:
    """Lines of ``path`` holding a literal collection of two or more of the words meaning 'else'."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            words = {
                elt.value for elt in node.elts if isinstance(elt, ast.Constant) and elt.value in ELSE_GUARDS
            }
            if len(words) >= 2:
                lines.append(node.lineno)
    return lines


def test_else_guards_are_defined_once() -> None:
    assert ELSE_GUARDS is vocabulary.ELSE_GUARDS == frozenset({"else", "[else]", "otherwise"})
    source = PACKAGE.parent
    elsewhere = {
        str(path.relative_to(source)): lines
        for path in sorted(source.rglob("*.py"))
        if path != PACKAGE / "vocabulary.py" and (lines := else_word_collections(path))
    }
    assert not elsewhere, f"words meaning 'else' defined again (import ELSE_GUARDS instead): {elsewhere}"


@pytest.mark.parametrize("text", ["else", "[else]", "otherwise", " Else ", "OTHERWISE", "\t[ELSE]\n"])
def test_words_meaning_else(text: str) -> None:
    assert means_else(text)
    assert profile.key_is_else(text)


@pytest.mark.parametrize("text", [None, "", "x > 0", "[x > 0]", "elsewhere", "true", "not else"])
def test_guards_that_do_not_mean_else(text: str | None) -> None:
    assert not means_else(text)


@given(
    st.sampled_from(sorted(ELSE_GUARDS)),
    st.text(" \t\n", max_size=3),
    st.text(" \t\n", max_size=3),
    st.data(),
)
def test_else_ignores_case_and_surrounding_space(
    word: str, before: str, after: str, data: st.DataObject
) -> None:
    flips = data.draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
    spelled = "".join(ch.upper() if flip else ch for ch, flip in zip(word, flips, strict=True))
    assert means_else(before + spelled + after)


@given(st.text(max_size=12))
def test_else_is_exactly_the_vocabulary(text: str) -> None:
    assert means_else(text) == (text.strip().lower() in ELSE_GUARDS)
