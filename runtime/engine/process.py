"""The process context ``p``: what generated model code may ask of the process running it.

Two classes implement it: the simulating :class:`~uml2perf_runtime.engine.context.Context` (SimPy, one
per process and thread) and the analytic
:class:`~uml2perf_runtime.analysis.analytic.AnalyticContext` (closed-form evaluation of models without
point-to-point messages or threads; it refuses those operations).  :class:`ProcessContext`
states the contract once; each of the two modules assigns an instance of its class to a
``ProcessContext`` variable, so mypy checks that neither drifts from it.  The arguments of the
communication operations are those of :data:`uml2perf_runtime.operations.registry.OPERATIONS`
(``tests/test_runtime_operations.py`` holds both classes to that table).  The contract in prose
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
    ) -> Any: ...
    def no_guard_holds(self, where: str, values: dict[str, Any]) -> None: ...
    def enter(self, elem: Element) -> None: ...
    def leave(self, elem: Element) -> None: ...
    def iteration(self, elem: Element) -> None: ...

    def send(self, elem: Element, dest: Any, size: Any = 0, tag: Any = 0, cost: Any = 0.0) -> Any: ...
    def recv(self, elem: Element, source: Any = -1, size: Any = 0, tag: Any = 0, cost: Any = 0.0) -> Any: ...
    def isend(self, elem: Element, dest: Any, size: Any = 0, tag: Any = 0, cost: Any = 0.0) -> Any: ...
    def irecv(self, elem: Element, source: Any = -1, size: Any = 0, tag: Any = 0, cost: Any = 0.0) -> Any: ...
    def wait(self, elem: Element, requests: Any = None, cost: Any = 0.0) -> Any: ...
    def barrier(self, elem: Element, cost: Any = 0.0) -> Any: ...
    def bcast(self, elem: Element, root: Any = 0, size: Any = 0, cost: Any = 0.0) -> Any: ...
    def reduce(self, elem: Element, root: Any = 0, size: Any = 0, cost: Any = 0.0) -> Any: ...
    def allreduce(self, elem: Element, size: Any = 0, cost: Any = 0.0) -> Any: ...
    def gather(self, elem: Element, root: Any = 0, size: Any = 0, cost: Any = 0.0) -> Any: ...
    def scatter(self, elem: Element, root: Any = 0, size: Any = 0, cost: Any = 0.0) -> Any: ...
    def allgather(self, elem: Element, size: Any = 0, cost: Any = 0.0) -> Any: ...
    def alltoall(self, elem: Element, size: Any = 0, cost: Any = 0.0) -> Any: ...

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


__all__ = ["ProcessContext", "COMPUTE", "COMM", "WAIT", "CATEGORY_INDEX", "CATEGORY_NAMES"]
