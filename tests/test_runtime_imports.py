"""The runtime's modules import each other without circles, and never import ``uml2perf``.

Every import counts: at module level, inside functions and under ``if TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"


def _dotted(path: Path) -> str:
    """The module's dotted name inside the runtime: ``engine.simulation`` for engine/simulation.py."""
    parts = path.relative_to(RUNTIME).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Runtime modules (dotted, see :func:`_dotted`) that ``path`` imports, and ``uml2perf`` if it does."""
    found: set[str] = set()
    package = _dotted(path).split(".")[:-1] if path.stem != "__init__" else _dotted(path).split(".")
    package = [part for part in package if part]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level >= 1:
                base = package[: len(package) - (node.level - 1)]
                if node.module:
                    found.add(".".join([*base, node.module]))
                    found.update(".".join([*base, node.module, alias.name]) for alias in node.names)
                else:
                    found.update(".".join([*base, alias.name]) for alias in node.names)
            elif node.module and node.module.split(".")[0] in ("uml2perf", "uml2perf_runtime"):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "uml2perf")
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_dotted(path): path for path in RUNTIME.rglob("*.py") if path.stem != "__init__"}
    return {name: _imports(path) & set(modules) for name, path in modules.items()}


def test_runtime_never_imports_uml2perf() -> None:
    for path in RUNTIME.rglob("*.py"):
        assert not {name for name in _imports(path) if name.startswith("uml2perf")}, path.name


def test_runtime_modules_have_no_import_circles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []
