"""Where a generated module would pass Python's own limits on nesting.

Python's parser accepts 100 levels of indentation and its compiler 20 nested
blocks (loops) per function.  A diagram nested deeper than that would give a
module that fails with ``IndentationError`` or ``SyntaxError`` when it is run;
the python handler checks its output with :func:`first_excess` and reports the
innermost element instead.  One pass over the lines, no compilation.
"""

from __future__ import annotations

from ...errors import ModelError


class NestedTooDeeply(ModelError):
    """The structured form of a diagram nests deeper than Python accepts (the flat form is tried next)."""


#: Indentation levels the Python tokenizer accepts (one less than its stack of 100).
MAX_INDENT_LEVELS = 100

#: Statically nested blocks the Python compiler accepts in one function.
MAX_NESTED_LOOPS = 20

_INDENT = "    "


def first_excess(text: str) -> tuple[str, str | None] | None:
    """``(what is wrong, xmi id of the nearest element before it)`` for the first excess, else ``None``."""
    # one entry per enclosing function: (its indentation, the indentations of its open loops)
    frames: list[tuple[int, list[int]]] = [(-1, [])]
    last_id: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        level = (len(line) - len(stripped)) // len(_INDENT)
        while len(frames) > 1 and frames[-1][0] >= level:
            frames.pop()  # left a nested function: its loops counted for it alone
        loops = frames[-1][1]
        while loops and loops[-1] >= level:
            loops.pop()
        if stripped.startswith("def "):
            frames.append((level, []))
        mark = stripped.find("xmi:id=")
        if mark >= 0:
            last_id = stripped[mark + 7 :].split()[0].rstrip("),")
        if level >= MAX_INDENT_LEVELS:
            return (
                f"control flow nested {level} levels deep; Python accepts at most {MAX_INDENT_LEVELS - 1}",
                last_id,
            )
        if stripped.startswith(("for ", "while ")):
            loops.append(level)
            if len(loops) > MAX_NESTED_LOOPS:
                return (
                    f"{len(loops)} loops nested in one another; Python accepts at most {MAX_NESTED_LOOPS}",
                    last_id,
                )
    return None
