"""Model text as Python literals and comments: names and ids appear in generated code only through these."""

from __future__ import annotations

import json

from ...model import Node


def comment(text: str) -> str:
    """Model text made safe for a ``#`` comment (no line breaks, no control characters)."""
    return repr(str(text))[1:-1]


def quote(text: str) -> str:
    """A Python string literal for any text (JSON escaping is valid Python and ASCII only)."""
    text = str(text)
    if '"' not in text and "\\" not in text and text.isprintable() and text.isascii():  # cheapest tests first
        return f'"{text}"'
    return json.dumps(text)


def docstring(text: str) -> str:
    """A one-line docstring literal; falls back to an escaped literal for unusual text."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"""{text}"""'
    return quote(text)


def describe(node: Node) -> str:
    name = comment(node.name) if node.name else node.kind.value
    return f"{name} (xmi:id={comment(node.id)})"
