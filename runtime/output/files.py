"""Every file uml2perf reads from a user or writes for one goes through here.

Writing (:func:`write_output`) is the one atomic writer of the project:
generated modules, traces, plots, CSV and JSON tables all use it.  It

* refuses to write over one of the command's own inputs (``convert m.uml -o
  m.uml`` would destroy the model);
* writes *into* what is not a regular file (a character device such as
  ``/dev/null``, a FIFO, a terminal) instead of replacing it: replacing
  ``/dev/null`` with a regular file as root breaks the whole machine.  Such a
  target is opened with ``O_TRUNC`` and ``O_NONBLOCK``; a FIFO that gets no
  reader, or stops reading, for :data:`IDLE_TIMEOUT` seconds is refused;
* writes this process's own descriptors (``/dev/stdout``, ``/dev/stderr``,
  ``/dev/fd/N``, ``/proc/self/fd/N``) through the descriptor itself, so the
  shell's redirection decides (``>`` truncates, ``>>`` appends); any other
  process's ``/proc/PID/...`` is refused;
* otherwise writes a temporary file in the target's folder and renames it into
  place, so an error, ``Ctrl-C`` or a ``SIGTERM``/``SIGHUP`` never leaves a
  half-written file, and removes the temporary file on every way out;
* refuses to replace a file nobody may write (mode 0444) unless forced
  (:func:`set_force`, the command line's ``--force``);
* gives a new file the mode the umask allows (as any editor does) and keeps the
  mode and, where the process may, the owner of a file it replaces; a symbolic
  link is kept and its target replaced.

Reading (:func:`read_input`) caps the number of bytes read from anything,
devices included (``/dev/zero`` is endless), and never blocks forever on a
FIFO that nobody writes to.  An input a command needs for two things (the
cache key and the model) is read once into :class:`InputBytes`, which every
reader accepts in place of the path: both then see the same bytes, whatever
happens to the file meanwhile, and a FIFO is read only once.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ..errors import SimulationError

__all__ = [
    "OutputError",
    "InputFileError",
    "write_output",
    "write_atomically",
    "read_input",
    "same_file",
    "refuse_inputs_as_outputs",
    "read_text_input",
    "set_force",
    "InputBytes",
    "read_once",
]

#: How long reading a FIFO or a terminal may wait for data before it is refused (seconds).
READ_IDLE_TIMEOUT = 10.0

#: How long writing a FIFO may wait for a reader, or for the reader to take more, before it is refused.
IDLE_TIMEOUT = READ_IDLE_TIMEOUT

_FORCE: list[bool] = [False]


def set_force(force: bool) -> None:
    """Whether outputs that nobody may write (mode 0444) are replaced anyway (``--force``)."""
    _FORCE[0] = force


class OutputError(SimulationError):
    """An output cannot be written where the user asked (missing folder, no permission, an input...)."""


class InputFileError(SimulationError):
    """An input file cannot be read: missing, a folder, too large, or a device that never ends."""


# --------------------------------------------------------------------------- writing


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name the same existing file (hard links and symbolic links included)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def refuse_inputs_as_outputs(
    outputs: dict[str, str | os.PathLike[str] | None], inputs: Iterable[str | os.PathLike[str] | None]
) -> None:
    """Stop before any work when an output (``{"trace file": path}``) names one of the inputs."""
    sources = [source for source in inputs if source is not None]
    for what, path in outputs.items():
        if path is None or str(path) == "-":
            continue
        for source in sources:
            if same_file(source, path):
                raise OutputError(
                    f"the {what} '{path}' is the input file '{source}'; writing it would destroy that input",
                    hint="choose another output path",
                )


def _umask() -> int:
    """The process's umask (read by setting and restoring it: there is no other portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_output(
    path: str | os.PathLike[str],
    content: str | bytes | Callable[[str], None],
    *,
    what: str = "output",
    inputs: Iterable[str | os.PathLike[str] | None] = (),
) -> Path:
    """Write ``content`` to ``path`` safely; return the path written.

    ``content`` is text (UTF-8, ``\\n`` line ends), bytes, or a function that
    writes the file at the temporary path it is given (a plot library that
    wants a file name).  ``what`` names the file in messages ("trace file").
    ``inputs`` are the files the command read: writing over one is refused.
    """
    target = Path(path)
    shown = str(target)
    refuse_inputs_as_outputs({what: target}, inputs)
    descriptor = _own_descriptor(target, what)
    if descriptor is not None:
        _write_descriptor(descriptor, content, what, shown)
        return target
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise OutputError(
            f"cannot write the {what} '{shown}': {exc.strerror or exc}",
            hint="check the path and its permissions",
        ) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputError(f"the {what} '{shown}' is a folder", hint="give a file name inside it")
    if info is not None and not stat.S_ISREG(info.st_mode):
        _refuse_dangerous_device(target, info, what)
        _write_in_place(target, content, what)
        return target
    if info is not None and not info.st_mode & 0o222 and not _FORCE[0]:
        raise OutputError(
            f"the {what} '{shown}' is read-only (mode {stat.S_IMODE(info.st_mode):o}); not replaced",
            hint="give --force to replace it anyway, or choose another output path",
        )
    if target.is_symlink():
        target_real = Path(os.path.realpath(target))  # keep the link, replace what it points to
    else:
        target_real = target
    _replace_atomically(target_real, content, what, shown, info)
    return target


#: What names a descriptor of this process; compiled at its first use (``re`` keeps it), since most
#: commands write no output through such a path and compiling costs a run's start-up 0.2 ms.
_OWN = (
    r"^/(?:dev/(?P<std>stdout|stderr)|dev/fd/(?P<fd>\d+)|proc/(?P<pid>self|thread-self|\d+)/fd/(?P<pfd>\d+))$"
)

#: Character devices that are safe to write a model or table into.
_SAFE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full")


def _own_descriptor(path: Path, what: str) -> int | None:
    """The descriptor number ``path`` names when it is one of this process's own; ``None`` otherwise.

    ``/proc/PID/...`` of any other process (also reached through a link) is refused: writing into
    another program's pipes or files is never what an output path means.
    """
    for name in (str(path), os.path.abspath(path)):
        match = re.match(_OWN, name)
        if match is None:
            continue
        pid = match.group("pid")
        if pid is not None and pid not in ("self", "thread-self") and int(pid) != os.getpid():
            break
        if match.group("std"):
            return 1 if match.group("std") == "stdout" else 2
        return int(match.group("fd") or match.group("pfd"))
    for name in (os.path.abspath(path), os.path.realpath(path)):
        parts = name.split("/")
        if (
            len(parts) > 2
            and parts[1] == "proc"
            and parts[2] not in ("self", "thread-self", str(os.getpid()))
        ):
            if parts[2].isdigit():
                raise OutputError(
                    f"the {what} '{path}' belongs to another process; "
                    "uml2perf writes only its own descriptors",
                    hint="choose a file name, or /dev/stdout",
                )
    return None


def _write_descriptor(fd: int, content: str | bytes | Callable[[str], None], what: str, shown: str) -> None:
    """Write through one of this process's descriptors (a duplicate), as the shell opened it."""
    if fd in (1, 2):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    data = _rendered(content, what) if callable(content) else content
    data = data.encode("utf-8") if isinstance(data, str) else data
    try:
        copy = os.dup(fd)
    except OSError as exc:
        raise OutputError(
            f"cannot write the {what} '{shown}': {exc.strerror or exc}", hint="that descriptor is not open"
        ) from None
    try:
        _write_all(copy, data, what, shown)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(
            f"cannot write the {what} '{shown}': {exc.strerror or exc}",
            hint="check that the descriptor is open for writing",
        ) from None
    finally:
        os.close(copy)


def _write_all(fd: int, data: bytes, what: str, shown: str) -> None:
    """All of ``data`` to ``fd``; a descriptor that takes nothing for :data:`IDLE_TIMEOUT` s is refused."""
    import select  # only a write into a device, FIFO or descriptor needs it

    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            written = 0
        if written:
            view = view[written:]
            continue
        _, ready, _ = select.select([], [fd], [], IDLE_TIMEOUT)
        if not ready:
            raise OutputError(
                f"the {what} '{shown}' took no data for {IDLE_TIMEOUT:g} s",
                hint="start the program that reads it first, or give a regular file",
            )


def _refuse_dangerous_device(target: Path, info: os.stat_result, what: str) -> None:
    """Write into FIFOs, terminals, /dev/null and this process's descriptors; never into disks or memory.

    Run as root, ``-o /dev/sda`` would overwrite a disk and ``-o /dev/mem`` memory: block devices,
    sockets and character devices other than terminals and the null devices are refused.
    """
    mode = info.st_mode
    if stat.S_ISFIFO(mode):
        return
    real = os.path.realpath(target)
    if stat.S_ISCHR(mode) and (real in _SAFE_DEVICES or real.startswith(("/dev/tty", "/dev/pts/"))):
        return
    kind = "block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode) else "device"
    raise OutputError(
        f"the {what} '{target}' is a {kind}; uml2perf writes only files, FIFOs, terminals and /dev/null",
        hint="choose a file name",
    )


def _write_in_place(target: Path, content: str | bytes | Callable[[str], None], what: str) -> None:
    """Write into a device or FIFO without creating or replacing anything (``O_TRUNC``, never blocking)."""
    try:
        data = _rendered(content, what) if callable(content) else content
        data = data.encode("utf-8") if isinstance(data, str) else data
        fd = _open_in_place(target, what)
        try:
            _write_all(fd, data, what, str(target))
        finally:
            os.close(fd)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(
            f"cannot write the {what} '{target}': {exc.strerror or exc}",
            hint="check the path and its permissions",
        ) from None


def _rendered(render: Callable[[str], None], what: str) -> bytes:
    """What ``render`` writes at a path, as bytes: rendered into a private temporary file first.

    A plot library opens the path it is given itself, blocking on a FIFO without a reader; rendered
    first, the bytes go into the FIFO or descriptor by the same rules as text.
    """
    import tempfile

    fd, temp = tempfile.mkstemp(prefix=".uml2perf-", suffix=".tmp")
    os.close(fd)
    try:
        with _removed_on_signal(temp):
            render(temp)
            with open(temp, "rb") as stream:
                return stream.read()
    except OSError as exc:
        raise OutputError(
            f"cannot write the {what}: {exc.strerror or exc}", hint="check the free space"
        ) from None
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass


def _open_in_place(target: Path, what: str) -> int:
    """Open a device or FIFO for writing; a FIFO with no reader is waited for up to :data:`IDLE_TIMEOUT` s."""
    import time  # only a write into a device or FIFO needs it

    flags = os.O_WRONLY | os.O_TRUNC | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    deadline = time.monotonic() + IDLE_TIMEOUT
    while True:
        try:
            return os.open(target, flags)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: a FIFO nobody reads yet
                raise
        if time.monotonic() > deadline:
            raise OutputError(
                f"the {what} '{target}' has had no reader for {IDLE_TIMEOUT:g} s",
                hint="start the program that reads it first, or give a regular file",
            )
        time.sleep(0.05)


def _replace_atomically(
    target: Path,
    content: str | bytes | Callable[[str], None],
    what: str,
    shown: str,
    info: os.stat_result | None,
) -> None:
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(
            f"cannot write the {what} '{shown}': its folder {folder} does not exist",
            hint=f"create {folder} first, or choose another output path",
        )
    import tempfile  # only a write needs it: a run that writes nothing does not load it

    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(
            f"cannot write the {what} '{shown}': {exc.strerror or exc}",
            hint="check that its folder is writable",
        ) from None
    try:
        with _removed_on_signal(temp):
            try:
                if callable(content):
                    os.close(fd)
                    content(temp)
                else:
                    data = content.encode("utf-8") if isinstance(content, str) else content
                    with os.fdopen(fd, "wb") as stream:
                        stream.write(data)
                        stream.flush()
                        os.fsync(stream.fileno())
                mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
                if info is not None:
                    _keep_owner(temp, info)
                os.chmod(temp, mode)
                os.replace(temp, target)
            except OSError as exc:
                raise OutputError(
                    f"cannot write the {what} '{shown}': {exc.strerror or exc}",
                    hint="check the path, its permissions and the free space",
                ) from None
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _keep_owner(temp: str, info: os.stat_result) -> None:
    """Give the new file the owner and group of the one it replaces, where this process may."""
    try:
        current = os.stat(temp)
        if (current.st_uid, current.st_gid) != (info.st_uid, info.st_gid):
            os.chown(temp, info.st_uid, info.st_gid)
    except (OSError, AttributeError):  # not root (or no chown): the replacing user owns it, as editors do
        pass


class _Terminated(BaseException):
    """Raised in place of dying from SIGTERM/SIGHUP, so that temporary files are removed first."""


@contextmanager
def _removed_on_signal(temp: str) -> Iterator[None]:
    """While a file is written, SIGTERM and SIGHUP remove the temporary file before the process ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import signal  # only a write needs it

    caught: list[int] = []

    def handler(signum: int, frame: object) -> None:
        caught.append(signum)
        raise _Terminated(signum)

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            previous[number] = signal.signal(number, handler)
        except (ValueError, OSError):
            pass
    try:
        yield
    except _Terminated:
        try:
            os.unlink(temp)
        except OSError:
            pass
        for number, old in previous.items():
            signal.signal(number, old)
        os.kill(os.getpid(), caught[0])  # die of the signal as the sender meant, now the file is gone
        raise
    finally:
        for number, old in previous.items():
            try:
                signal.signal(number, old)
            except (ValueError, OSError):
                pass


def write_atomically(path: str | os.PathLike[str], what: str, write: Callable[[str], None]) -> Path:
    """Let ``write(temporary_path)`` produce the file, then move it into place (see :func:`write_output`)."""
    return write_output(path, write, what=what)


# --------------------------------------------------------------------------- reading


class InputBytes(os.PathLike[str]):
    """An input file already read: its path as the user gave it and its bytes.

    It stands for the path everywhere (``str()``, ``os.fspath()`` and messages give the path) and
    :func:`read_input` answers with the bytes instead of reading the file again.
    """

    __slots__ = ("path", "data")

    def __init__(self, path: str | os.PathLike[str], data: bytes) -> None:
        self.path = os.fspath(path)
        self.data = data

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"InputBytes({self.path!r}, {len(self.data)} bytes)"


def read_once(
    path: str | os.PathLike[str] | None, *, what: str, max_bytes: int | None = None
) -> InputBytes | None:
    """``path`` read into memory (with every rule of :func:`read_input`); ``None`` stays ``None``."""
    if path is None or isinstance(path, InputBytes):
        return path
    if max_bytes is None:
        from ..engine.limits import current

        max_bytes = current().input_bytes
    return InputBytes(path, read_input(path, max_bytes=max_bytes, what=what, limit_hint=_LIMIT_HINT))


_LIMIT_HINT = "raise the limit with --limit input_bytes=N or UML2PERF_MAX_BYTES"


def read_input(
    path: str | os.PathLike[str], *, max_bytes: int, what: str = "file", limit_hint: str = ""
) -> bytes:
    """The bytes of an input file, at most ``max_bytes`` of them, whatever kind of file it is.

    A regular file larger than the cap is refused before it is read; a device
    or FIFO is read in chunks and refused as soon as it passes the cap; a FIFO
    or terminal that sends nothing for :data:`READ_IDLE_TIMEOUT` seconds is
    refused instead of waiting forever.  :class:`InputBytes` gives the bytes read before.
    """
    shown = str(path)
    if isinstance(path, InputBytes):
        if len(path.data) > max_bytes:
            raise _too_large(shown, what, len(path.data), max_bytes, limit_hint)
        return path.data
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputFileError(
            f"cannot read the {what} '{shown}': {exc.strerror or exc}", hint="check the path"
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputFileError(f"the {what} '{shown}' is a folder, not a file", hint="give a file inside it")
    regular = stat.S_ISREG(info.st_mode)
    if regular and info.st_size > max_bytes:
        raise _too_large(shown, what, info.st_size, max_bytes, limit_hint)
    try:
        fd = os.open(path, flags | (0 if regular else os.O_NONBLOCK))
    except OSError as exc:
        raise InputFileError(
            f"cannot read the {what} '{shown}': {exc.strerror or exc}",
            hint="check the path and its permissions",
        ) from None
    try:
        with os.fdopen(fd, "rb", buffering=0) as stream:
            data = _read_capped(stream, regular, max_bytes, shown, what, info.st_size)
    except OSError as exc:
        raise InputFileError(
            f"cannot read the {what} '{shown}': {exc.strerror or exc}",
            hint="check the path and its permissions",
        ) from None
    if len(data) > max_bytes:
        raise _too_large(shown, what, len(data), max_bytes, limit_hint, at_least=True)
    return data


def _read_capped(
    stream: IO[bytes], regular: bool, max_bytes: int, shown: str, what: str, size: int = 0
) -> bytes:
    if not regular:
        import select  # only a pipe or terminal needs it
    chunks: list[bytes] = []
    total = 0
    while total <= max_bytes:
        if not regular:
            ready, _, _ = select.select([stream], [], [], READ_IDLE_TIMEOUT)
            if not ready:
                raise InputFileError(
                    f"the {what} '{shown}' sent no data for {READ_IDLE_TIMEOUT:g} s",
                    hint="give a regular file (a FIFO or terminal with no writer would wait forever)",
                )
        # a regular file is asked for all its bytes at once (one read, no join; one byte more tells
        # whether it grew); a device or FIFO comes in pieces so the cap stops it early
        wanted = size + 1 - total if regular and total < size + 1 else 1 << 20
        piece = min(wanted, max_bytes + 1 - total)
        try:
            chunk = stream.read(piece)
        except BlockingIOError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(
    shown: str, what: str, size: int, max_bytes: int, limit_hint: str, at_least: bool = False
) -> InputFileError:
    size_text = (
        f"more than {max_bytes} bytes" if at_least else f"{size} bytes, more than the limit of {max_bytes}"
    )
    return InputFileError(
        f"the {what} '{shown}' is {size_text}", hint=limit_hint or "this is not an input uml2perf can read"
    )


def read_text_input(path: str | os.PathLike[str], *, what: str, max_bytes: int | None = None) -> str:
    """An input file as text: UTF-8, an optional byte-order mark dropped, read with the input cap.

    A file in another encoding is refused with the position of the first
    byte that is not UTF-8 and what to do, never misread.
    """
    if max_bytes is None:
        from ..engine.limits import current

        max_bytes = current().input_bytes
    data = read_input(
        path,
        max_bytes=max_bytes,
        what=what,
        limit_hint="raise the limit with --limit input_bytes=N or UML2PERF_MAX_BYTES",
    )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(
            f"the {what} '{path}' is not UTF-8 text "
            f"(line {line}, column {column}: byte 0x{data[exc.start]:02x})",
            hint="save it as UTF-8 (TOML files must be UTF-8)",
        ) from None
