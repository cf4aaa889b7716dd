"""A private, content-verified cache of what commands compute again and again.

Three kinds of entries make repeated commands fast:

* ``module-…``: the Python model generated from an XMI export (its source, its
  compiled code and what ``run`` must still say about it), keyed by a digest
  of the input bytes, the sidecar bytes, the options and uml2perf itself, so
  that ``uml2perf run`` of an unchanged file imports neither lxml nor Jinja;
* ``code-…``: the compiled code of a generated module (``compile()`` of a
  20,000-action model takes about half a second);
* ``jinja-…``: the templates' compiled code.

The cache holds code that is executed, so it trusts nothing it reads:

* every entry is named by a digest of the inputs that produced it and carries a
  SHA-256 digest of its own content (and its name); the digest is checked
  before a byte is deserialised, so a damaged, truncated or swapped entry is
  ignored (and rebuilt), never loaded.  Nothing is pickled;
* the folder is opened once without following links and every entry is opened
  relative to that descriptor, with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a FIFO or
  device in place of an entry never makes a read wait), and used only when it
  is a regular file; the owner and the mode are
  checked on the opened descriptors (no race between a check and a use).  A
  folder or an entry that another user owns or can write is refused with one
  warning, and the command goes on without the cache;
* any problem (read-only home, full disk, a damaged entry) means computing
  again: the cache can make a command faster, never make it fail.

Entries live in ``$XDG_CACHE_HOME/uml2perf`` (``~/.cache/uml2perf``) on Linux and
in the platform's user cache folder elsewhere (``platformdirs``).
``UML2PERF_NO_CACHE=1`` turns the cache off; ``UML2PERF_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import warnings
from pathlib import Path
from types import CodeType
from typing import Any, Protocol

__all__ = [
    "DISABLE_VARIABLE",
    "LOCATION_VARIABLE",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "Cache",
    "cache_dir",
    "compile_cached",
    "key_of",
    "open_cache",
    "package_fingerprint",
    "sha256",
]

#: Environment variable that disables the cache when set to a non-empty value other than ``0``.
DISABLE_VARIABLE = "UML2PERF_NO_CACHE"

#: Environment variable naming another cache folder (tests, shared machines).
LOCATION_VARIABLE = "UML2PERF_CACHE_DIR"

#: Entries kept per kind (a 20,000-action model's code is about 5 MiB); older ones are deleted.
MAX_ENTRIES = 32

#: Entries larger than this are never read (a corrupted size must not exhaust memory).
MAX_ENTRY_BYTES = 256 * 1024 * 1024

#: First bytes of every entry: format name and version.
MAGIC = b"uml2perf-cache-2\n"

_DIGEST_SIZE = 32

#: What compiled code depends on besides its source: the interpreter and its byte-code format.
_INTERPRETER = f"{sys.implementation.cache_tag}|{sys.version}"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


#: Inputs below this many bytes are hashed with the interpreter's own SHA-256: importing ``hashlib``
#: loads OpenSSL, which costs a repeated ``run`` more start-up time than hashing such an input takes
#: without it (3 ms per MiB against 0.7).  Larger inputs take OpenSSL's faster code.
SMALL_INPUT_BYTES = 256 * 1024


class Hash(Protocol):
    """What uml2perf uses of a hash object."""

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...

    def hexdigest(self) -> str: ...


def sha256(data: bytes = b"", *, expected_bytes: int | None = None) -> Hash:
    """A SHA-256 hash object started with ``data``; ``expected_bytes`` is the size of all it will hash.

    The same digest either way; only where the code comes from depends on the size.
    """
    size = len(data) if expected_bytes is None else expected_bytes
    if size < SMALL_INPUT_BYTES:
        try:
            from _sha256 import sha256 as builtin  # Python 3.11
        except ImportError:
            try:
                from _sha2 import sha256 as builtin  # Python 3.12 and later
            except ImportError:
                builtin = None
        if builtin is not None:
            result: Hash = builtin(data)
            return result
    import hashlib

    return hashlib.sha256(data)


class UnsafeCacheWarning(UserWarning):
    """The cache folder (or an entry) may be changed by another user; the cache is not used."""


def _default_root() -> Path:
    """Where per-user caches live on this platform."""
    chosen = os.environ.get(LOCATION_VARIABLE, "").strip()
    if chosen:
        return Path(chosen)
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME") or ""
        root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
        return root / "uml2perf"
    import platformdirs  # macOS: ~/Library/Caches, Windows: %LOCALAPPDATA%

    return Path(platformdirs.user_cache_dir("uml2perf", appauthor=False))


def _disabled() -> bool:
    return os.environ.get(DISABLE_VARIABLE, "").strip() not in ("", "0")


def _warn(message: str) -> None:
    warnings.warn(message, UnsafeCacheWarning, stacklevel=3)


def _owned_privately(info: os.stat_result) -> bool:
    """This user's, and no one else may write it."""
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    getuid = getattr(os, "getuid", None)
    return getuid is None or info.st_uid == getuid()


class Cache:
    """One opened, checked cache folder; entries are read and written relative to its descriptor."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self._fd = fd

    # -- reading

    def get(self, kind: str, key: str) -> bytes | None:
        """The verified payload of entry ``kind-key``, or ``None`` (missing, damaged or unsafe)."""
        name = f"{kind}-{key}"
        try:
            # non-blocking: a FIFO in place of an entry must not make the open wait for a writer
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=self._fd)
        except OSError:
            return None  # missing, or a link (ELOOP): never followed
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                self._discard(name)
                return None
            if not _owned_privately(info):
                _warn(f"ignoring cache entry {self.folder / name}: another user owns it or may write it")
                return None
            with os.fdopen(fd, "rb", closefd=False) as stream:
                data = stream.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        payload = _verified(name, data)
        if payload is None:
            self._discard(name)  # damaged or forged: rebuilt by the caller
        return payload

    # -- writing

    def put(self, kind: str, key: str, payload: bytes) -> None:
        """Store ``payload`` as entry ``kind-key`` atomically (best effort), then prune old entries."""
        name = f"{kind}-{key}"
        data = MAGIC + _digest(name, payload) + payload
        temp = f".{name}.{os.getpid()}.tmp"
        try:
            fd = os.open(
                temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=self._fd
            )
        except OSError:
            return
        try:
            try:
                with os.fdopen(fd, "wb") as stream:
                    stream.write(data)
                os.replace(temp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
            except BaseException:
                self._discard(temp)
                raise
        except OSError:
            return
        self._prune(kind)

    def _discard(self, name: str) -> None:
        try:
            os.unlink(name, dir_fd=self._fd)
        except OSError:
            pass

    def _prune(self, kind: str) -> None:
        """Delete all but the :data:`MAX_ENTRIES` newest entries of ``kind`` (after a miss only)."""
        try:
            entries = []
            for entry in os.scandir(self._fd):
                if entry.name.startswith(f"{kind}-"):
                    entries.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
            entries.sort(reverse=True)
            for _, name in entries[MAX_ENTRIES:]:
                self._discard(name)
        except OSError:
            pass


def _digest(name: str, payload: bytes) -> bytes:
    digest = sha256(MAGIC, expected_bytes=len(payload))
    digest.update(name.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(payload)
    return digest.digest()


def _verified(name: str, data: bytes) -> bytes | None:
    """The payload of an entry whose format and digest are right, else ``None``."""
    head = len(MAGIC) + _DIGEST_SIZE
    if len(data) < head or not data.startswith(MAGIC) or len(data) > MAX_ENTRY_BYTES:
        return None
    payload = data[head:]
    if _digest(name, payload) != data[len(MAGIC) : head]:
        return None
    return payload


_OPENED: dict[str, Cache | None] = {}


def open_cache() -> Cache | None:
    """The cache of this user, opened and checked once per process; ``None`` when off or unsafe."""
    if _disabled():
        return None
    try:
        folder = _default_root()
    except (OSError, RuntimeError, ImportError):  # RuntimeError: no home directory to be found
        return None
    marker = str(folder)
    if marker in _OPENED:
        return _OPENED[marker]
    _OPENED[marker] = cache = _open_folder(folder)
    return cache


def _open_folder(folder: Path) -> Cache | None:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    if not stat.S_ISDIR(info.st_mode) or not _owned_privately(info):
        os.close(fd)
        _warn(
            f"not using the cache folder {folder}: another user owns it or may write to it, "
            "and it would hold code that uml2perf runs (make it yours with mode 700, or set "
            f"{LOCATION_VARIABLE} to a private folder)"
        )
        return None
    return Cache(folder, fd)


def cache_dir() -> Path | None:
    """The cache folder (created when missing) when the cache is usable, else ``None``."""
    cache = open_cache()
    return cache.folder if cache is not None else None


def key_of(*parts: str | bytes) -> str:
    """The entry key for content that depends on ``parts`` (and on the interpreter)."""
    digest = sha256(_INTERPRETER.encode())
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))  # length-prefixed: parts cannot run together
        digest.update(data)
    return digest.hexdigest()


def compile_cached(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, taken from the cache when it was compiled before."""
    cache = open_cache()
    if cache is None:
        return compile(source, filename, "exec")
    key = key_of(source, filename)
    code = load_code(cache.get("code", key))
    if code is None:
        code = compile(source, filename, "exec")
        cache.put("code", key, marshal.dumps(code))
    return code


def load_code(payload: bytes | None) -> CodeType | None:
    """Code from a verified payload (``None`` for anything that is not a code object)."""
    if payload is None:
        return None
    try:
        code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


#: Version of the parsed-TOML entries (:func:`parsed_toml`); a change of their format changes it.
_TOML_FORMAT = "toml-1"


def parsed_toml(text: str, what: str) -> dict[str, Any]:
    """``loads_toml(text, what)``, taken from the cache when the same text was parsed before.

    A repeated ``uml2perf run --machine FILE`` then needs neither ``tomllib`` (about 1.5 ms to
    import) nor the parse.  Only tables that parsed and passed ``loads_toml``'s checks are stored,
    as ``marshal`` data, which keeps every type a TOML table holds but dates and times: a table
    with one of those is parsed every time.  The caller checks the table's keys and values
    afterwards, as it does with a table just parsed, so every message stays the same.
    """
    from uml2perf_runtime.output.structured import loads_toml

    cache = open_cache()
    if cache is None:
        return loads_toml(text, what)
    key = key_of(_TOML_FORMAT, text)
    payload = cache.get("toml", key)
    if payload is not None:
        try:
            found = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            found = None
        if isinstance(found, dict):
            return found
    data = loads_toml(text, what)
    try:
        payload = marshal.dumps(data)
    except ValueError:  # a date or time: not marshal data
        return data
    cache.put("toml", key, payload)
    return data


_FINGERPRINT: list[str] = []


def package_fingerprint() -> str:
    """A digest of uml2perf's own files (names, sizes, modification times) and version.

    Generated code depends on the generator, the templates and the runtime;
    a changed file in any of them (an upgrade, an edited checkout) must never
    find an entry made by the old code.
    """
    if _FINGERPRINT:
        return _FINGERPRINT[0]
    from . import __version__

    here = Path(__file__).resolve().parent
    roots = [here]
    for package in ("uml2perf_templates", "uml2perf_runtime"):
        spec = sys.modules.get(package)
        origin = getattr(spec, "__file__", None) if spec else None
        if origin is None:
            import importlib.util

            found = importlib.util.find_spec(package)
            origin = found.origin if found else None
        if origin:
            roots.append(Path(origin).resolve().parent)
    lines = [f"{name}|{size}|{mtime}\n" for root in roots for name, size, mtime in sorted(_files(root))]
    digest = sha256(__version__.encode())
    digest.update("".join(lines).encode())  # the same digest as one update per line
    _FINGERPRINT.append(digest.hexdigest())
    return _FINGERPRINT[0]


def _files(root: Path) -> list[tuple[str, int, int]]:
    """Path, size and modification time of each source file under ``root``, ``__pycache__`` left out.

    What ``os.walk`` and ``os.stat`` of each file gave, from ``os.scandir`` entries: a link to a file
    counts as that file, a linked folder is not entered, and what cannot be read is left out.
    """
    found: list[tuple[str, int, int]] = []
    folders = [str(root)]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name.endswith((".py", ".jinja", ".toml")) and entry.is_file():
                    info = entry.stat()
                    found.append((entry.path, info.st_size, info.st_mtime_ns))
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
            except OSError:
                continue
    return found
