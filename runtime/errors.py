"""Errors of the runtime estimator.

Every error a model can provoke while it is evaluated derives from
:class:`SimulationError`, so a caller (the command line, a notebook) catches one
class and prints ``error.message``.  Messages name the element (name, XMI id and
line), the process and what to do, because the person reading them is the
author of a UML diagram, not of this runtime.

The runtime never imports the generator package, so these classes do not derive
from ``uml2perf.errors``; the command line treats both trees alike.

All constructors accept the message as their only positional argument, so an
exception can be re-created from ``type(e)(*e.args)`` (SimPy does that when a
process fails) without losing its text.
"""

from __future__ import annotations

from typing import Any


class SimulationError(Exception):
    """Base of every error raised while a performance model is evaluated."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class MachineError(SimulationError):
    """A machine file is missing, unreadable or has wrong keys or values."""


class ParameterError(SimulationError):
    """A ``--set`` override names no parameter of the model or has a bad value."""


class DeadlockError(SimulationError):
    """No event is left to process but some processes or threads have not finished.

    ``report`` lists every unfinished context as a dict with the keys
    ``pid``, ``tid``, ``node``, ``element`` (``name``, ``id``, ``kind``, ``line``
    or None when the context never reached an element) and ``waiting_for``
    (a sentence such as ``"recv from 3 tag 7"``).
    """

    def __init__(
        self,
        message: str,
        *,
        report: list[dict[str, Any]] | None = None,
        time: float = 0.0,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.report: list[dict[str, Any]] = list(report or [])
        self.time = time


class LimitError(SimulationError):
    """A configured limit was reached: simulated time, loop iterations or events.

    ``kind`` is ``"time"``, ``"iterations"`` or ``"events"``; ``running`` lists
    the contexts still active for time and event limits (same dict shape as
    :attr:`DeadlockError.report`).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "time",
        running: list[dict[str, Any]] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.running: list[dict[str, Any]] = list(running or [])


class ModelRuntimeError(SimulationError):
    """An exception inside model code: a cost function, guard or code fragment.

    Carries the element the process was executing (``element_name``,
    ``element_id``, ``line``), the process (``pid``, ``tid``) and the original
    exception (``original``, also chained as ``__cause__``).
    """

    def __init__(
        self,
        message: str,
        *,
        element_name: str | None = None,
        element_id: str | None = None,
        line: int | None = None,
        pid: int | None = None,
        tid: int | None = None,
        original: BaseException | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.element_name = element_name
        self.element_id = element_id
        self.line = line
        self.pid = pid
        self.tid = tid
        self.original = original


__all__ = [
    "SimulationError",
    "MachineError",
    "ParameterError",
    "DeadlockError",
    "LimitError",
    "ModelRuntimeError",
]
