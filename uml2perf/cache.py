"""A private, best-effort cache of compiled code for commands that run again and again.

Python caches the byte code of imported modules in ``__pycache__``, but not
of code uml2perf compiles itself, and not at all under
``PYTHONDONTWRITEBYTECODE=1``.  Two things are worth keeping between
commands:

* the byte code of generated model modules: ``uml2perf run`` of an XMI export
  compiles the module it generates, and ``compile()`` of a 20,000-action
  model (60,000 lines) takes about half a second, ten times more than
  loading the code back with :mod:`marshal`;
* the Jinja templates' compiled code (tens of milliseconds per command).

Entries live in ``$XDG_CACHE_HOME/uml2perf`` (``~/.cache/uml2perf`` when
unset).  ``UML2PERF_NO_CACHE=1`` turns the cache off.  The cache is only
used when the folder belongs to the current user and nobody else may write
to it (it holds code that is run), entries are written atomically (a
temporary file, then ``os.replace``), and any problem (read-only home, full
disk, a damaged entry) silently falls back to compiling: the cache can make
a command faster, never make it fail.  An entry's name is the SHA-256 of
everything its content depends on (the source text, the file name the code
reports, the exact Python version), so a stale entry is never found.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
from pathlib import Path
from types import CodeType

#: Environment variable that disables the cache when set to a non-empty value other than ``0``.
DISABLE_VARIABLE = "UML2PERF_NO_CACHE"

#: Generated modules whose code is kept (a 20,000-action model's code is about 5 MiB); older ones are deleted.
MAX_CODE_ENTRIES = 32

#: What compiled code depends on besides its source: the interpreter and its byte-code format.
_INTERPRETER = f"{sys.implementation.cache_tag}|{sys.version}"


def cache_dir(*, create: bool = True) -> Path | None:
    """The cache folder, created private on first use; ``None`` when disabled or unsafe."""
    if os.environ.get(DISABLE_VARIABLE, "").strip() not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    folder = root / "uml2perf"
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory to be found
        return None
    if not _private(info):
        return None
    return folder


def _private(info: os.stat_result) -> bool:
    """A real folder of this user that no one else can write to (its code is run)."""
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    getuid = getattr(os, "getuid", None)
    return getuid is None or info.st_uid == getuid()


def key_of(*parts: str) -> str:
    """The entry name for content that depends on ``parts`` (and on the interpreter)."""
    digest = hashlib.sha256(_INTERPRETER.encode())
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))  # length-prefixed: parts cannot run together
        digest.update(data)
    return digest.hexdigest()


def compile_cached(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, taken from the cache when it was compiled before."""
    folder = cache_dir()
    if folder is None:
        return compile(source, filename, "exec")
    entry = folder / f"code-{key_of(source, filename)}.marshal"
    code = _load_code(entry)
    if code is None:
        code = compile(source, filename, "exec")
        store(entry, marshal.dumps(code))
        prune(folder, "code-*.marshal", MAX_CODE_ENTRIES)
    return code


def prune(folder: Path, pattern: str, keep: int) -> None:
    """Delete all but the ``keep`` most recently written entries matching ``pattern`` (best effort).

    Only called after a miss, which has just paid for a compilation, so
    listing the folder costs nothing noticeable.
    """
    try:
        entries = sorted(folder.glob(pattern), key=lambda path: path.stat().st_mtime, reverse=True)
        for old in entries[keep:]:
            old.unlink()
    except OSError:
        pass  # another process pruned first, or the folder went away


def _load_code(entry: Path) -> CodeType | None:
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    try:
        code = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None  # damaged (a disk that filled up mid-write of an older version): compile again
    return code if isinstance(code, CodeType) else None


def store(entry: Path, data: bytes) -> None:
    """Write one entry atomically; failures are ignored (the next command compiles again)."""
    temp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
        except BaseException:
            os.unlink(temp)
            raise
        os.replace(temp, entry)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


__all__ = ["DISABLE_VARIABLE", "MAX_CODE_ENTRIES", "cache_dir", "compile_cached", "key_of", "prune", "store"]
