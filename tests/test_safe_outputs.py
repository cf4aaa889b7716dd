"""The one writer of every output: never over an input, never replacing a device, never half-written."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from uml2perf_runtime.output.files import OutputError, write_output

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uml2perf", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture()
def model(tmp_path: Path) -> Path:
    target = tmp_path / "prophet.uml"
    shutil.copy(SAMPLES / "prophet.uml", target)
    return target


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "prophet.uml", "-o", "prophet.uml"],
        ["convert", "prophet.uml", "-o", "./link.uml"],
        ["convert", "prophet.uml", "-o", "hard.uml"],
        ["run", "prophet.uml", "--trace", "prophet.uml"],
        ["run", "prophet.uml", "--plot", "prophet.uml"],
        ["sweep", "prophet.uml", "--grid", "procs=1,2", "--csv", "prophet.uml"],
        ["sweep", "prophet.uml", "--grid", "procs=1,2", "--json", "hard.uml"],
    ],
)
def test_an_output_that_is_an_input_is_refused(model: Path, args: list[str]) -> None:
    os.symlink(model.name, model.parent / "link.uml")
    os.link(model, model.parent / "hard.uml")
    before = model.read_bytes()
    done = _cli(*args, cwd=model.parent)
    assert done.returncode == 1, done.stderr
    assert "is the input file" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("error:") == 1
    assert model.read_bytes() == before
    assert sorted(p.name for p in model.parent.iterdir()) == ["hard.uml", "link.uml", "prophet.uml"]


def test_a_sidecar_is_an_input_too(model: Path) -> None:
    sidecar = model.parent / "costs.toml"
    sidecar.write_text('[defaults]\ncost = "1"\n')
    done = _cli("convert", "prophet.uml", "--sidecar", "costs.toml", "-o", "costs.toml", cwd=model.parent)
    assert done.returncode == 1 and "is the input file" in done.stderr
    assert sidecar.read_text() == '[defaults]\ncost = "1"\n'


def test_a_character_device_is_written_into_not_replaced(model: Path) -> None:
    before = os.stat("/dev/null")
    done = _cli("convert", "prophet.uml", "-o", "/dev/null", cwd=model.parent)
    assert done.returncode == 0, done.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_fifo_is_written_into(model: Path) -> None:
    fifo = model.parent / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    done = _cli("convert", "prophet.uml", "-o", "pipe", cwd=model.parent)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].startswith(b'"""Performance model')


def test_dev_stdout_is_the_standard_output(model: Path) -> None:
    done = _cli("convert", "prophet.uml", "-o", "/dev/stdout", cwd=model.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('"""Performance model')


def test_new_files_follow_the_umask_and_existing_ones_keep_their_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        fresh = write_output(tmp_path / "fresh.txt", "x\n")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        os.chmod(kept, 0o604)
        write_output(kept, "new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and kept.read_text() == "new"
    finally:
        os.umask(old)


def test_plots_and_traces_get_the_umask_mode_not_0600(model: Path) -> None:
    pytest.importorskip("matplotlib")
    done = subprocess.run(
        [
            "sh",
            "-c",
            f"umask 022 && {sys.executable} -m uml2perf run prophet.uml --trace t.json --plot p.png",
        ],
        cwd=model.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for name in ("t.json", "p.png"):
        assert stat.S_IMODE((model.parent / name).stat().st_mode) == 0o644


def test_a_link_is_kept_and_its_target_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real.name)
    write_output(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_unwritable_places_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="does not exist"):
        write_output(tmp_path / "missing" / "x.py", "x")
    with pytest.raises(OutputError, match="is a folder"):
        write_output(tmp_path, "x")


def test_sys_path_output_is_a_message_not_an_internal_error(model: Path) -> None:
    done = _cli("convert", "prophet.uml", "-o", "/sys/uml2perf-test.py", cwd=model.parent)
    assert done.returncode == 1
    assert "cannot write the output" in done.stderr and "internal error" not in done.stderr


def test_a_signal_during_a_write_removes_the_temporary_file(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, signal
        from uml2perf_runtime.output.files import write_output
        def slow(path):
            with open(path, "w") as f:
                f.write("partial")
            os.kill(os.getpid(), signal.SIGTERM)
        write_output({str(tmp_path / "out.txt")!r}, slow)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_an_error_while_writing_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")

    def broken(path: str) -> None:
        Path(path).write_text("half")
        raise RuntimeError("renderer failed")

    with pytest.raises(RuntimeError):
        write_output(target, broken)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@pytest.mark.parametrize("path", ["/dev/mem", "/dev/port", "/dev/loop0", "/proc/sys/vm/swappiness"])
def test_disks_memory_and_kernel_settings_are_never_written(path: str, tmp_path: Path) -> None:
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    before = os.stat(path)
    content = Path(path).read_bytes()[:64] if path.startswith("/proc/") else None
    with pytest.raises(OutputError):
        write_output(path, "not a device\n")
    after = os.stat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    if content is not None:
        assert Path(path).read_bytes()[:64] == content


def test_another_process_descriptors_are_refused(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
    try:
        link = tmp_path / "link"
        link.symlink_to(f"/proc/{other.pid}/fd/1")
        for path in (f"/proc/{other.pid}/fd/1", str(link)):
            with pytest.raises(OutputError, match="another process"):
                write_output(path, "injected\n")
    finally:
        other.kill()
        stdout, _ = other.communicate()
    assert stdout == b""


@pytest.mark.parametrize("append", [False, True])
def test_own_descriptors_are_written_as_the_shell_opened_them(tmp_path: Path, append: bool) -> None:
    log = tmp_path / "log"
    log.write_text("x" * 101)
    flags = os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(log, flags)
    try:
        for path in (f"/dev/fd/{fd}", f"/proc/self/fd/{fd}", f"/proc/{os.getpid()}/fd/{fd}"):
            write_output(path, "abcdef")
    finally:
        os.close(fd)
    assert log.read_text() == ("x" * 101 if append else "") + "abcdef" * 3


def test_dev_stdout_appended_by_the_shell_keeps_the_log(model: Path) -> None:
    log = model.parent / "log"
    log.write_text("y" * 101)
    done = subprocess.run(
        f"{sys.executable} -m uml2perf convert prophet.uml -o /dev/stdout >> log",
        shell=True,
        cwd=model.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert text.startswith("y" * 101 + '"""Performance model') and text.endswith("\n")


def test_a_read_only_output_is_refused_unless_forced(model: Path) -> None:
    out = model.parent / "out.py"
    out.write_text("keep me\n")
    out.chmod(0o444)
    done = _cli("convert", "prophet.uml", "-o", "out.py", cwd=model.parent)
    assert done.returncode == 1 and "read-only" in done.stderr and "--force" in done.stderr
    assert out.read_text() == "keep me\n"
    forced = _cli("convert", "prophet.uml", "-o", "out.py", "--force", cwd=model.parent)
    assert forced.returncode == 0, forced.stderr
    assert out.read_text().startswith('"""Performance model') and stat.S_IMODE(out.stat().st_mode) == 0o444


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give files away")
def test_a_replaced_file_keeps_its_owner(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    os.chown(out, 65534, 65534)
    write_output(out, "new\n")
    info = out.stat()
    assert out.read_text() == "new\n" and (info.st_uid, info.st_gid) == (65534, 65534)


def test_a_fifo_output_with_no_reader_is_refused_after_the_idle_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uml2perf_runtime.output import files

    monkeypatch.setattr(files, "IDLE_TIMEOUT", 0.2)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="no reader"):
        write_output(fifo, "table\n")
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader that never reads
    try:
        with pytest.raises(OutputError, match="took no data"):
            write_output(fifo, "x" * (1 << 20))
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_rendered_outputs_go_into_fifos_and_descriptors_by_the_same_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uml2perf_runtime.output import files

    def render(path: str) -> None:
        Path(path).write_bytes(b"picture")

    monkeypatch.setattr(files, "IDLE_TIMEOUT", 0.2)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="no reader"):  # the renderer never blocks on the FIFO itself
        write_output(fifo, render)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    monkeypatch.setattr(files, "IDLE_TIMEOUT", 30.0)
    write_output(fifo, render)
    reader.join(timeout=30)
    log = tmp_path / "log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        write_output(f"/dev/fd/{fd}", render)
    finally:
        os.close(fd)
    assert received == [b"picture"] and log.read_bytes() == b"picture"
