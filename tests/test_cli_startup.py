"""What the command line imports: little to start, and on a repeated run nothing of the converter."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from uml2perf import cache

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

#: Libraries only conversion, fitting, calibration or plotting need.
HEAVY = ("lxml", "jinja2", "networkx", "scipy", "matplotlib", "dask")
#: uml2perf's own modules a repeated ``run`` of an unchanged file never needs.
CONVERTER = (
    "uml2perf.reader",
    "uml2perf.profile",
    "uml2perf.navigation",
    "uml2perf.handlers",
    "uml2perf.generation",
    "uml2perf.expressions",
    "uml2perf.check",
    "uml2perf.sweep",
    "uml2perf.fit",
    "uml2perf.calibrate",
    "uml2perf.compare",
    "uml2perf.scaling",
    "uml2perf.sweep_plot",
)


def _modules_after(code: str, cwd: Path, env: dict[str, str]) -> tuple[int, list[str], str]:
    probe = code + "\nimport sys\nprint(repr(sorted(sys.modules)), file=sys.stderr)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    return done.returncode, ast.literal_eval(done.stderr.splitlines()[-1]), done.stdout


def _loaded(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_importing_the_command_line_loads_no_library_of_a_stage(tmp_path: Path) -> None:
    code, modules, _ = _modules_after("import uml2perf.cli, uml2perf.api", tmp_path, dict(os.environ))
    assert code == 0
    assert _loaded(modules, (*HEAVY, "numpy", "simpy", *CONVERTER)) == []
    assert _loaded(modules, ("json", "traceback", "hashlib")) == []  # imported when they are used


def test_a_repeated_run_loads_nothing_of_the_converter(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    env.pop(cache.LOCATION_VARIABLE, None)
    run = "from uml2perf.cli import main\nassert main(['run', 'prophet.uml', '--json']) == 0"
    first_code, first, first_out = _modules_after(run, tmp_path, env)
    second_code, second, second_out = _modules_after(run, tmp_path, env)
    assert first_code == second_code == 0
    assert "lxml" in first and "uml2perf.generation" in first  # the first run converted
    assert json.loads(first_out)["time"] == json.loads(second_out)["time"]
    assert _loaded(second, (*HEAVY, *CONVERTER)) == []
    assert "_hashlib" not in second  # a small input is hashed without loading OpenSSL


def test_a_sidecar_given_by_another_path_is_another_entry(tmp_path: Path) -> None:
    """Warnings about a sidecar name it as given, so the path is part of the entry's key."""
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "m.uml")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    text = "[variables]\ngv = 1\n"  # differs from the model's GV in case only: a warning naming the sidecar
    (tmp_path / "a" / "s.toml").write_text(text)
    (tmp_path / "b" / "s.toml").write_text(text)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    env.pop(cache.LOCATION_VARIABLE, None)

    def warnings(sidecar: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "uml2perf", "run", "m.uml", "--procs", "1", "--sidecar", sidecar],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return [line for line in done.stderr.splitlines() if "s.toml" in line]

    first = warnings(str(Path("a") / "s.toml"))
    second = warnings(str(Path("b") / "s.toml"))
    assert first and all(line.startswith(str(Path("a") / "s.toml")) for line in first)
    assert second and all(line.startswith(str(Path("b") / "s.toml")) for line in second)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at the top, in functions and under ``TYPE_CHECKING`` alike."""
    package = "uml2perf." + ".".join(path.relative_to(ROOT / "uml2perf").with_suffix("").parts)
    package = package.removesuffix(".__init__")
    base = package.split(".") if path.name == "__init__.py" else package.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            prefix = base[: len(base) - node.level + 1] if node.level else []
            module = ".".join([*prefix, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_no_import_circles_among_the_commands() -> None:
    """The command modules import the library; the library never imports a command module."""
    files = {
        "uml2perf."
        + ".".join(p.relative_to(ROOT / "uml2perf").with_suffix("").parts).removesuffix(".__init__"): p
        for p in (ROOT / "uml2perf").rglob("*.py")
    }
    graph = {name: {m for m in _imports(path) if m in files and m != name} for name, path in files.items()}
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                circles.append([*trail[trail.index(other) :], other])
            elif other not in state:
                visit(other, [*trail, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []
    commands = {"uml2perf.cli", *(n for n in files if n.startswith("uml2perf.commands"))}
    for name in files.keys() - commands - {"uml2perf.__main__"}:
        assert not graph[name] & commands, f"{name} imports a command module"
