"""One exception tree and one diagnostic record for every stage.

Every problem a user can cause points at a place in their file: the file name,
the line, the XMI id and the name of the element, so that the message can be
acted on without a debugger.  Stages raise a subclass of :class:`Uml2PerfError`
for problems that stop the work, and collect :class:`Diagnostic` records for
problems that ``uml2perf check`` reports all at once.
"""

from __future__ import annotations

from enum import StrEnum

from uml2perf_runtime.engine.records import FrozenRecord


class Location(FrozenRecord):
    """Where an element or a problem sits in the user's input.

    An immutable record compared by value (a plain class rather than a dataclass: every command
    imports this module, and building a dataclass costs more than the rest of it).
    """

    __slots__ = _FIELDS = ("file", "line", "element_id", "name", "uml_type")
    file: str | None
    line: int | None
    element_id: str | None
    name: str | None
    uml_type: str | None

    def __init__(
        self,
        file: str | None = None,
        line: int | None = None,
        element_id: str | None = None,
        name: str | None = None,
        uml_type: str | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "file", file)
        put(self, "line", line)
        put(self, "element_id", element_id)
        put(self, "name", name)
        put(self, "uml_type", uml_type)

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file:
            parts.append(f"{self.file}:{self.line}" if self.line else self.file)
        what: list[str] = []
        if self.element_id:
            what.append(f"[xmi:id={self.element_id}]")
        if self.uml_type:
            what.append(self.uml_type)
        if self.name:
            what.append(repr(self.name))
        if what:
            parts.append(" ".join(what))
        return ": ".join(parts) if parts else "<unknown location>"


#: The location of a problem that has none.
_NOWHERE = Location()


class Severity(StrEnum):
    """How bad a diagnostic is; errors stop conversion, the rest are advice."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Diagnostic(FrozenRecord):
    """A problem found in a model, kept as data so all can be listed at once."""

    __slots__ = _FIELDS = ("severity", "message", "location", "hint", "code")
    severity: Severity
    message: str
    location: Location
    hint: str | None
    code: str | None

    def __init__(
        self,
        severity: Severity,
        message: str,
        location: Location = _NOWHERE,
        hint: str | None = None,
        code: str | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "severity", severity)
        put(self, "message", message)
        put(self, "location", location)
        put(self, "hint", hint)
        put(self, "code", code)

    def __str__(self) -> str:
        text = f"{self.location}: {self.severity.value}: {self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text


class Uml2PerfError(Exception):
    """Base of every error meant for the user: printed once, exit status 1."""

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location or Location()
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location != Location() else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputError(Uml2PerfError):
    """The input file cannot be read as XML/XMI (missing, truncated, hostile, too big)."""


class ModelError(Uml2PerfError):
    """The model is readable but wrong or incomplete (dangling id, bad name, no activity...)."""


class ExpressionError(ModelError):
    """A cost function, guard, tag or code fragment lies outside the expression language."""


class GenerationError(Uml2PerfError):
    """A handler could not produce its output from a valid model."""


class UsageError(Uml2PerfError):
    """The command line was used wrongly (exit status 2)."""


def option_text(option: str, value: str) -> str:
    """``--option VALUE`` as a user can type it back: ``--option=VALUE`` when the value starts with
    ``-`` (argparse would take ``-84-16-...`` for an option), quoted for the shell where needed."""
    import shlex

    quoted = shlex.quote(value)
    return f"{option}={quoted}" if value.startswith("-") else f"{option} {quoted}"
