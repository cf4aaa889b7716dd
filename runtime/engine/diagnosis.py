"""Errors raised by model code, told in the model's terms: which element, which process.

An exception inside a generated cost function or code fragment is turned into a
:class:`~uml2perf_runtime.errors.ModelRuntimeError` naming the element whose line failed (found
from the traceback: the failing generated line names its element, or a comment carrying its XMI
id precedes it), the process and thread, and what was being evaluated.
"""

from __future__ import annotations

import linecache
import re
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ..errors import ModelRuntimeError
from ..spec import Element
from .sources import install

_RUNTIME_DIR = str(Path(__file__).resolve().parent.parent)


_XMI_ID = re.compile(r"xmi:id=([^\s,)]+)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _model_frames(tb: TracebackType | None) -> list[tuple[FrameType, int]]:
    """Frames of model code (outside this runtime), innermost first."""
    frames = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_RUNTIME_DIR):
            frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    frames.reverse()
    return frames


def _element_of_frame(frame: FrameType, lineno: int, by_id: dict[str, Element]) -> tuple[Element, str] | None:
    """The element a failing line of generated code belongs to, and what was evaluated."""
    filename = frame.f_code.co_filename
    line = linecache.getline(filename, lineno, frame.f_globals)
    if "rt.count(" in line:  # a repeat count: the loop's own element, or the first its body names
        owner = _loop_owner(frame, lineno, line, by_id)
        if owner is not None:
            return owner, "repeat count of"
        for number in range(lineno + 1, lineno + 20):
            following = linecache.getline(filename, number, frame.f_globals)
            for name in _NAME.findall(following):
                candidate = frame.f_globals.get(name)
                if isinstance(candidate, Element):
                    return candidate, "repeat count of"
    for name in _NAME.findall(line):
        candidate = frame.f_globals.get(name)
        if isinstance(candidate, Element):
            what = "cost of" if ".compute(" in line else "arguments of"
            return candidate, what
    first = frame.f_code.co_firstlineno
    for number in range(lineno - 1, first - 1, -1):
        text = linecache.getline(filename, number, frame.f_globals).strip()
        if text.startswith("#"):
            match = _XMI_ID.search(text)
            if match and match.group(1) in by_id:
                return by_id[match.group(1)], "code of"
    return None


def _loop_owner(frame: FrameType, lineno: int, line: str, by_id: dict[str, Element]) -> Element | None:
    """The element whose loop a ``for`` line opens: named just above it at the same indentation.

    A loop node's lines read ``# TimeLoop (xmi:id=...): loop``, ``p.enter(E_TimeLoop)``, then the
    ``for``; the element its body starts with is another one.
    """
    indent = line[: len(line) - len(line.lstrip())]
    for number in range(lineno - 1, max(frame.f_code.co_firstlineno, lineno - 4) - 1, -1):
        text = linecache.getline(frame.f_code.co_filename, number, frame.f_globals)
        if text[: len(indent)] != indent or text[len(indent) : len(indent) + 1].isspace():
            return None
        stripped = text.strip()
        if stripped.startswith("#"):
            match = _XMI_ID.search(stripped)
            return by_id.get(match.group(1)) if match else None
        if stripped.startswith("p.enter("):
            for name in _NAME.findall(stripped[len("p.enter(") :]):
                candidate = frame.f_globals.get(name)
                if isinstance(candidate, Element):
                    return candidate
            return None
        return None  # other code: the loop is not an element's own
    return None


_CONDITION = re.compile(r"^(\s*)(if|elif|while)\b")
_NAMED_COMMENT = re.compile(r"^(\s*)#\s*(.*?)\s*\(xmi:id=([^\s,)]+)\)(?::\s*(.+))?$")


def _condition_of_frame(
    frame: FrameType, lineno: int, by_id: dict[str, Element]
) -> tuple[str, str, str] | None:
    """``(name, xmi id, kind)`` of the decision or loop whose condition failed on this line, if it did.

    A guard is evaluated on the ``if``/``elif``/``while`` line of its decision, which the comment
    naming the decision precedes at the same indentation (comments of the branches are deeper).
    Without this, the guard's error would be told as one of the element before the decision.
    """
    filename = frame.f_code.co_filename
    condition = _CONDITION.match(linecache.getline(filename, lineno, frame.f_globals))
    if condition is None:
        return None
    indent = condition.group(1)
    for number in range(lineno - 1, frame.f_code.co_firstlineno - 1, -1):
        text = linecache.getline(filename, number, frame.f_globals).rstrip("\n")
        if not text.strip() or not text.startswith(indent) or text[len(indent) : len(indent) + 1].isspace():
            continue  # deeper: a branch's body
        named = _NAMED_COMMENT.match(text)
        if named is None:
            if text.lstrip().startswith(("if ", "elif ", "else", "while ")):
                continue
            return None
        if named.group(3) in by_id:
            return None  # an element's own code (a code fragment with an if): told as its code
        return named.group(2), named.group(3), (named.group(4) or "decision").strip()
    return None


_ASSIGNED = re.compile(r"^\s*v\.([A-Za-z_][A-Za-z0-9_]*)\s*=")


def _variable_of_frames(frames: list[tuple[FrameType, int]]) -> str | None:
    """The model variable whose value a failing generated line computes (``v.X = ...``), if any."""
    for frame, lineno in frames:
        line = linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals)
        match = _ASSIGNED.match(line)
        if match:
            return match.group(1)
    return None


def model_error(exc: Exception, ctx: Any, elements: tuple[Element, ...]) -> ModelRuntimeError:
    """Turn an exception raised by model code into a message naming element and process.

    The element is found from the traceback (the generated line that failed
    names its element, or a comment carrying its XMI id precedes it), else it
    is the last element the context reached.
    """
    install()  # the generated modules' lines, kept back until a line is read (.sources)
    by_id = {e.xmi_id: e for e in elements if e.xmi_id}
    found = None
    condition = None
    frames = _model_frames(exc.__traceback__)
    for frame, lineno in frames:
        condition = _condition_of_frame(frame, lineno, by_id)
        if condition is not None:
            break
        found = _element_of_frame(frame, lineno, by_id)
        if found is not None:
            break
    variable = _variable_of_frames(frames) if found is None and condition is None else None
    if isinstance(exc, (ArithmeticError, ValueError)) and str(exc):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if condition is not None:
        elem = None
        where = f"in the condition of {condition[2]} {condition[0]!r} (xmi:id={condition[1]})"
    elif found is not None:
        elem, what = found
        where = f"in {what} {elem.describe()}"
    elif variable is not None:
        elem = None
        where = f"in the value of model variable {variable!r} (its default, or its --set/sidecar value)"
    elif ctx.cur is not None:
        elem = ctx.cur
        where = f"after {elem.describe()}"
    else:
        elem = None
        where = "before the first element"
    error = ModelRuntimeError(
        f"{text} {where} on {ctx.describe()}",
        element_name=elem.name if elem else condition[0] if condition else None,
        element_id=elem.xmi_id if elem else condition[1] if condition else None,
        line=elem.line if elem else None,
        pid=ctx.pid,
        tid=ctx.tid,
        original=exc,
        hint="check the cost function or code fragment and the variables it uses "
        "(--set NAME=VALUE overrides a model variable)",
    )
    error.__cause__ = exc
    return error


__all__ = ["model_error"]
