"""Small builders for hand-written runtime models (no code generator needed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from uml2perf_runtime import Element, Machine, ModelSpec


def elements(*names: str, kind: str = "action") -> list[Element]:
    """Elements numbered in order, with xmi ids ``_<name>`` and lines 10, 11, ..."""
    return [Element(i, name, kind, f"_{name}", 10 + i) for i, name in enumerate(names)]


def one_roofline_action(**tags: Any) -> tuple[Callable[[Any, Any], Any], list[Element]]:
    """A main function running one hardware-aware action ``K`` with ``tags``, and its elements."""
    (k,) = elements("K")

    def main(p: Any, v: Any) -> Any:
        yield from p.roofline(k, **tags)

    return main, [k]


def spec(
    main: Callable[[Any, Any], Any],
    elems: Sequence[Element],
    *,
    init: Callable[[Any, Any], Any] | None = None,
    parameters: Sequence[tuple[str, Any]] = (),
    name: str = "test",
) -> ModelSpec:
    """A ModelSpec around a hand-written main generator function."""
    kwargs: dict[str, Any] = {}
    if init is not None:
        kwargs["init"] = init
    return ModelSpec(
        name=name,
        source=f"{name}.uml",
        elements=tuple(elems),
        main=main,
        parameters=tuple(parameters),
        **kwargs,
    )


def machine(nodes: int = 1, cores: int = 1, speed: float = 1.0, **kwargs: Any) -> Machine:
    """A machine without a file."""
    return Machine(name="test", nodes=nodes, cores_per_node=cores, speed=speed, **kwargs)


def finish_times(results: Any) -> list[float]:
    """Finish time of every process, by pid."""
    return [row["time"] for row in results.per_process]
