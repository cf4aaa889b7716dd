"""The process context ``p``: what generated model code may ask of the process running it.

Two classes implement it: the simulating :class:`~uml2perf_runtime.engine.context.Context` (SimPy, one
per process and thread) and the analytic
:class:`~uml2perf_runtime.analysis.analytic.AnalyticContext` (closed-form evaluation of models without
point-to-point messages or threads; it refuses those operations).  :class:`ProcessContext`
states the contract once; each of the two modules assigns an instance of its class to a
``ProcessContext`` variable, so mypy checks that neither drifts from it.  The communication
operations are not written out here: both classes bind them from
:data:`uml2perf_runtime.operations.registry.OPERATIONS` (:class:`GeneratedContext` is ``p`` with
them; ``tests/test_runtime_operations.py`` holds every class to that table).  The contract in prose
is ``docs/architecture.md`` ("The process context p").

Every operation that takes time returns an iterable for the caller's ``yield from``.

The categories of time a process spends are numbered here too: ``compute``, ``comm``, ``wait``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from ..spec import Element

COMPUTE = 0
COMM = 1
WAIT = 2
#: Category names and their slots in the per-process totals.
CATEGORY_INDEX: dict[str, int] = {"compute": COMPUTE, "comm": COMM, "communication": COMM, "wait": WAIT}
CATEGORY_NAMES = ("compute", "comm", "wait")

Body = Callable[[Any, Any], Any]


class ProcessContext(Protocol):
    """The ``p`` of generated code (see ``docs/architecture.md``, "The process context p")."""

    pid: Any
    nprocs: int
    tid: int
    nthreads: int
    uid: Any
    node: Any
    nnodes: int
    ppn: Any
    item: int
    v: Any

    def param(self, name: str, default: Any) -> Any: ...
    def random(self) -> float: ...
    def compute(self, elem: Element, cost: float) -> Iterable[Any]: ...
    def roofline(
        self,
        elem: Element,
        cost: float = 0.0,
        *,
        flops: Any = 0.0,
        bytes: Any = 0.0,  # noqa: A002 - the tag's name in the profile
        device: str | None = None,
        copy_in: Any = 0.0,
        copy_out: Any = 0.0,
        footprint: Any = None,
        fresh: Any = 0.0,
        allocation: Any = None,
        calls: Any = 0.0,
        operations: Any = (),
    ) -> Any: ...
    def no_guard_holds(self, where: str, values: dict[str, Any]) -> None: ...
    def enter(self, elem: Element) -> None: ...
    def leave(self, elem: Element) -> None: ...
    def iteration(self, elem: Element) -> None: ...
    def send_site(
        self, elem: Element, dest: int, size: float = 0, tag: int = 0, cost: float = 0.0
    ) -> Callable[[], Any]: ...
    def recv_site(
        self, elem: Element, source: int = -1, size: float = 0, tag: int = 0, cost: float = 0.0
    ) -> Callable[[], Any]: ...

    # The communication operations (send, recv, ..., allreduce, ...) are the table's
    # (operations/registry.py); both classes bind them from it, with its parameters.  Generated
    # code's ``p`` is a :class:`GeneratedContext`, which adds them.

    def fork(self, elem: Element, branches: Iterable[Body]) -> Any: ...
    def parallel(self, elem: Element, threads: int, body: Body) -> Any: ...
    def critical(self, elem: Element, name: str, body: Body) -> Any: ...
    def pipeline(
        self,
        elem: Element,
        items: int,
        stages: Sequence[Body],
        **options: Any,
    ) -> Any: ...
    def taskpool(
        self,
        elem: Element,
        threads: int,
        items: int,
        body: Body,
        **options: Any,
    ) -> Any: ...


class GeneratedContext(ProcessContext, Protocol):
    """The ``p`` generated code sees: :class:`ProcessContext` and the table's operations.

    ``p.allreduce(E, size=..., cost=...)`` and the other operations are methods both contexts
    bind from :data:`~uml2perf_runtime.operations.registry.OPERATIONS` when their classes are
    made, with the table's parameters and defaults (``tests/test_runtime_operations.py`` holds
    every class to the table); to a type checker each is a call returning what ``yield from``
    takes.
    """

    def __getattr__(self, operation: str) -> Callable[..., Any]: ...


__all__ = [
    "ProcessContext",
    "GeneratedContext",
    "COMPUTE",
    "COMM",
    "WAIT",
    "CATEGORY_INDEX",
    "CATEGORY_NAMES",
]
