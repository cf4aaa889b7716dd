"""Source text of generated modules run without a file, for the messages that quote their lines.

Errors and tracebacks read a line through ``linecache``, and code executed from a string has no
file to read it from, so its text is handed to ``linecache`` as the module runs.  Importing
``linecache`` imports ``tokenize`` (about 1 ms), and a run whose model never fails never reads a
line.  A one-shot command (``uml2perf run``) therefore calls :func:`defer` first: then
:func:`register` keeps the text here until :func:`install`, which the two readers of those lines
call before they read: the diagnosis of a failing model and the command's ``--debug`` traceback.
Without :func:`defer` (a program or notebook using the library), the text goes to ``linecache`` at
once, so a traceback Python prints by itself quotes the lines too.
"""

from __future__ import annotations

import sys

#: Texts not yet handed to ``linecache``, by file name, oldest first; None: hand them on at once.
_KEPT: dict[str, str] | None = None


def defer() -> None:
    """Keep registered texts until :func:`install` (for a process that reads lines only on failure)."""
    global _KEPT
    if _KEPT is None:
        _KEPT = {}


def register(filename: str, source: str) -> None:
    """Make ``source`` the text ``linecache`` gives for ``filename`` (now, or at :func:`install`)."""
    if _KEPT is None or "linecache" in sys.modules:
        install()  # whatever waited comes first: a later text for the same name replaces it
        _put(filename, source)
    else:
        _KEPT[filename] = source


def install() -> None:
    """Hand every text kept by :func:`register` to ``linecache`` (call before reading a line)."""
    if _KEPT:
        for filename, source in _KEPT.items():
            _put(filename, source)
        _KEPT.clear()


def _put(filename: str, source: str) -> None:
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


__all__ = ["defer", "install", "register"]
