"""Micro-benchmark of the expression language: microseconds per parse and per print.

A model of 20,000 actions holds tens of thousands of costs, guards, tags and
code fragments, most of them repeated texts, so the cost of one parse matters
to ``uml2perf convert``.  For typical texts this prints, in microseconds per
call (best of ``--repeat`` rounds):

* ``tokens``: parsing through the token-level normaliser (what every parse
  costs when the text needs OCL or C spellings rewritten);
* ``fast``: parsing a text seen for the first time, taking the fast path
  where the text is plain Python already;
* ``memo``: parsing a text seen before, with a new location each time, as
  the generator does for every element;
* ``print 1st`` / ``print``: :func:`~uml2perf.expressions.to_python` of a
  freshly parsed tree (the tree is printed once) and of the same tree again
  (names are only substituted);

and then the whole set of cost texts of the benchmark's 20,000-action chain
model, parsed and printed the way the generator does.

``--against PATH`` also times another copy of the expression language on the
same texts, interleaved with this one, and prints each time as a ratio
now / before (below 1: faster now).  PATH is the ``uml2perf/expressions``
folder of another checkout (``git worktree add /tmp/old REV``), or, for
revisions where the language was one module, that module's file.

Usage::

    python benchmarks/expressions.py
    python benchmarks/expressions.py --against /tmp/old/uml2perf/expressions --repeat 7
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

# imported after the path set-up, so that a plain checkout works too
from uml2perf import expressions as ex  # noqa: E402
from uml2perf.errors import Location  # noqa: E402
from uml2perf.expressions import printing, syntax  # noqa: E402

# (kind, text): kind is "expression", "code" or "body" (a cost function body over ``pid``, ``n``).
TYPICAL: tuple[tuple[str, str], ...] = (
    ("expression", "3e-6 * W"),
    ("expression", "5e-6 + pid * 1e-9"),
    ("expression", "ceil(NAT / nprocs) * 2e-3 * (1 + (pid % 3) / 4)"),
    ("expression", "2e-3 if pid == 0 else 1e-3"),
    ("expression", "1e-3 * log2(nprocs + 1)"),
    ("expression", "FSA2(pid) + 121 / P"),
    ("expression", "(pid + 1) % nprocs"),
    ("expression", "SIZE"),
    ("expression", "0"),
    ("expression", "NAT > 40"),
    ("expression", "GV == 1"),
    ("expression", "pid = 0"),
    ("expression", "x <> 1 && !done"),
    ("expression", "[n mod 2 = 0]"),
    ("code", "GV = 1; P = 3.14;"),
    ("code", "x = n / p\ny = x * 2 + 1"),
    ("code", "x = n // p; // comment"),
    ("code", "if (GV = 1) { P = P * 2; } else { P = 3; }"),
    ("body", "return 32 / (pid + 1);"),
    ("body", "{ return n * t_flop / P; }"),
)
PARAMETERS = ("pid", "n")


def load_module(path: Path) -> ModuleType:
    """Import another copy of the expression language (package folder or module) under a private name."""
    if path.is_dir():
        spec = importlib.util.spec_from_file_location(
            "uml2perf_expressions_before", path / "__init__.py", submodule_search_locations=[str(path)]
        )
    else:
        spec = importlib.util.spec_from_file_location("uml2perf_expressions_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def best_us(call: Callable[[], Any], repeat: int, budget: float = 0.04) -> float:
    """Best time per call in microseconds over ``repeat`` rounds of at least ``budget`` seconds."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            call()
        if time.perf_counter() - start >= budget / 4 or number >= 1 << 16:
            break
        number *= 2
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            call()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e6


def parse_with(module: ModuleType, kind: str, text: str, location: Location | None = None) -> Any:
    if kind == "code":
        return module.parse_code(text, location)
    if kind == "body":
        return module.parse_function_body(text, PARAMETERS, location)
    return module.parse_expression(text, location, what="cost")


def uncached(kind: str, text: str, *, fast: bool) -> Any:
    """One parse without the memo, through the fast path or always through the tokens."""
    if kind == "code":
        return syntax.code_from_text(text, None, fast=fast)
    if kind == "body":
        return syntax.function_body_from_text(text, PARAMETERS, None, fast=fast)
    return syntax.expression_from_text(text, "cost", None, fast=fast)


def rename_for(parsed: Any) -> dict[str, str]:
    names = set(parsed.names) | set(getattr(parsed, "assigned", ()))
    return {
        name: f"p.{ex.SYSTEM_PARAMETERS[name]}" if name in ex.SYSTEM_PARAMETERS else f"v.{name}"
        for name in names
    }


def leading_for(parsed: Any) -> dict[str, tuple[str, ...]]:
    return {name: ("p", "v") for name in parsed.calls}


def typical_row(
    kind: str, text: str, repeat: int, before: ModuleType | None, locations: list[Location]
) -> str:
    """One line of the table: every way of parsing and printing ``text``."""
    turn = iter(range(10**12))

    def located() -> Location:
        return locations[next(turn) % len(locations)]

    parsed = parse_with(ex, kind, text)
    rename, leading = rename_for(parsed), leading_for(parsed)
    row: list[str] = [kind, f"`{text!r}`"]
    tokens = best_us(lambda: uncached(kind, text, fast=False), repeat)
    fast = best_us(lambda: uncached(kind, text, fast=True), repeat)
    memo = best_us(lambda: parse_with(ex, kind, text, located()), repeat)
    # the first print of a tree makes its template, later ones only fill names in
    first = best_us(
        lambda: printing.fill(
            printing.Printer().expression(parsed.tree.body)
            if kind != "code"
            else printing.Printer().module(parsed.tree),
            rename,
            leading,
            {},
        ),
        repeat,
    )
    again = best_us(lambda: ex.to_python(parsed, rename, leading), repeat)
    row += [f"{tokens:.1f}", f"{fast:.1f}", f"{memo:.2f}", f"{first:.1f}", f"{again:.1f}"]
    if before is not None:
        old = parse_with(before, kind, text)
        old_memo = best_us(lambda: parse_with(before, kind, text, located()), repeat)
        old_print = best_us(lambda: before.to_python(old, rename, leading), repeat)
        # measured again right after the older copy, so that both see the same machine load
        memo = best_us(lambda: parse_with(ex, kind, text, located()), repeat)
        again = best_us(lambda: ex.to_python(parsed, rename, leading), repeat)
        row += [f"{memo / old_memo:.2f}", f"{again / old_print:.2f}"]
    return "| " + " | ".join(row) + " |"


def typical_table(repeat: int, before: ModuleType | None) -> list[str]:
    # A new location per call, as for the elements of a model; made beforehand so that only parsing is timed.
    locations = [Location(file="model.uml", line=i, element_id=f"_a{i}", name=f"A{i}") for i in range(1024)]
    header = "| kind | text | tokens | fast | memo | print 1st | print |"
    rule = "|---|---|---|---|---|---|---|"
    if before is not None:
        header += " memo now/before | print now/before |"
        rule += "---|---|"
    return [header, rule] + [typical_row(kind, text, repeat, before, locations) for kind, text in TYPICAL]


def chain_costs(actions: int) -> list[str]:
    """The cost texts of the chain model of ``benchmarks/synthetic.py`` (same formula, kept here)."""
    return [f"{i % 10 + 1}e-6 * W" if i % 2 else f"{i % 7 + 1}e-6 + pid * 1e-9" for i in range(actions)]


def clear_memo_of(module: ModuleType) -> None:
    """Forget the parses a copy of the language remembers (a package, or the older single module)."""
    single_module = getattr(module, "_clear_memo", None)
    (single_module or module.syntax.clear_memo)()


def model_workload(module: ModuleType, texts: list[str]) -> float:
    """Seconds to parse and print every text with its own location, as the generator does."""
    rename = {"W": "v.W", "pid": "p.pid"}
    start = time.perf_counter()
    for i, text in enumerate(texts):
        parsed = module.parse_expression(
            text, Location(file="model.uml", line=i, element_id=f"_a{i}"), what="cost"
        )
        module.to_python(parsed, rename)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds per measurement; the best is kept")
    parser.add_argument("--actions", type=int, default=20_000, help="cost texts in the model workload")
    parser.add_argument(
        "--against", type=Path, help="another copy of the expression language to compare with"
    )
    args = parser.parse_args(argv)
    before = load_module(args.against) if args.against else None

    print(f"Python {sys.version.split()[0]}; microseconds per call, best of {args.repeat}\n")
    print("\n".join(typical_table(args.repeat, before)))

    texts = chain_costs(args.actions)
    distinct = len(set(texts))
    print(f"\nChain model: {len(texts):,} cost texts ({distinct} distinct), parsed and printed one by one")
    results: list[float] = []
    old_results: list[float] = []
    for turn in range(max(2, args.repeat)):  # interleaved, taking turns to go first
        order = [ex] if before is None else [ex, before] if turn % 2 else [before, ex]
        for module in order:
            clear_memo_of(module)
            (results if module is ex else old_results).append(model_workload(module, texts))
    now = min(results)
    print(f"  now:    {now * 1e3:8.1f} ms  ({now / len(texts) * 1e6:.1f} us per text, memo cleared first)")
    if old_results:
        old = min(old_results)
        print(f"  before: {old * 1e3:8.1f} ms  ({old / len(texts) * 1e6:.1f} us per text)")
        print(f"  now / before: {now / old:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
