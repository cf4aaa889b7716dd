"""The cache executes nothing it has not verified, follows no links, and trusts no one else's files."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uml2perf import cache

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
POSIX = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(cache.DISABLE_VARIABLE, raising=False)
    monkeypatch.delenv(cache.LOCATION_VARIABLE, raising=False)
    return tmp_path / "xdg" / "uml2perf"


def _entries(folder: Path, kind: str) -> list[Path]:
    return sorted(folder.glob(f"{kind}-*"))


def test_compiled_code_is_kept_verified_and_found_again(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = cache.compile_cached("x = 6 * 7\n", "<model>")
    (entry,) = _entries(cache_home, "code")
    assert oct(cache_home.stat().st_mode & 0o777) == "0o700" and oct(entry.stat().st_mode & 0o777) == "0o600"
    assert entry.read_bytes().startswith(cache.MAGIC)

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached code should have been used")

    monkeypatch.setattr(cache, "compile", no_compile, raising=False)
    again = cache.compile_cached("x = 6 * 7\n", "<model>")
    scope: dict[str, int] = {}
    exec(again, scope)  # noqa: S102 - our own test source
    assert scope["x"] == 42 and again.co_filename == first.co_filename == "<model>"


def test_source_and_file_name_both_key_an_entry(cache_home: Path) -> None:
    cache.compile_cached("x = 1\n", "<a>")
    cache.compile_cached("x = 1\n", "<b>")
    cache.compile_cached("x = 2\n", "<a>")
    assert len(_entries(cache_home, "code")) == 3


def test_a_changed_entry_is_never_loaded_and_is_rebuilt(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An attacker's (or a disk's) change to the code inside an entry: the digest no longer matches."""
    cache.compile_cached("y = 1\n", "<m>")
    (entry,) = _entries(cache_home, "code")
    data = bytearray(entry.read_bytes())
    evil = __import__("marshal").dumps(compile("import os; y = 666", "<m>", "exec"))
    forged = bytes(data[: len(cache.MAGIC) + 32]) + evil  # the old digest, new code
    entry.write_bytes(forged)
    loaded: list[bytes] = []
    real_loads = cache.marshal.loads
    monkeypatch.setattr(cache.marshal, "loads", lambda b: loaded.append(b) or real_loads(b))
    code = cache.compile_cached("y = 1\n", "<m>")
    scope: dict[str, int] = {}
    exec(code, scope)  # noqa: S102
    assert scope["y"] == 1 and evil not in loaded
    assert entry.read_bytes() != forged  # rebuilt


def test_an_entry_moved_to_another_name_does_not_verify(cache_home: Path) -> None:
    cache.compile_cached("a = 1\n", "<m>")
    cache.compile_cached("a = 2\n", "<m>")
    one, two = _entries(cache_home, "code")
    shutil.copy(one, two)
    scope: dict[str, int] = {}
    exec(cache.compile_cached("a = 2\n", "<m>"), scope)  # noqa: S102
    exec(cache.compile_cached("a = 1\n", "<m>"), scope)  # noqa: S102
    assert scope["a"] == 1
    exec(cache.compile_cached("a = 2\n", "<m>"), scope)  # noqa: S102
    assert scope["a"] == 2


@POSIX
def test_a_link_in_place_of_an_entry_is_not_followed(cache_home: Path, tmp_path: Path) -> None:
    cache.compile_cached("z = 1\n", "<m>")
    (entry,) = _entries(cache_home, "code")
    elsewhere = tmp_path / "elsewhere"
    shutil.copy(entry, elsewhere)
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert cache.open_cache().get("code", entry.name[len("code-") :]) is None  # type: ignore[union-attr]


@POSIX
def test_an_entry_others_may_write_is_refused(cache_home: Path) -> None:
    cache.compile_cached("w = 1\n", "<m>")
    (entry,) = _entries(cache_home, "code")
    entry.chmod(0o666)
    with pytest.warns(cache.UnsafeCacheWarning, match="another user"):
        assert cache.open_cache().get("code", entry.name[len("code-") :]) is None  # type: ignore[union-attr]


@POSIX
def test_a_folder_others_may_write_is_refused_with_a_warning(cache_home: Path) -> None:
    cache_home.mkdir(parents=True, mode=0o700)
    cache_home.chmod(0o777)
    with pytest.warns(cache.UnsafeCacheWarning, match="another user owns it or may write"):
        assert cache.open_cache() is None
    cache.compile_cached("z = 1\n", "<m>")
    assert not list(cache_home.iterdir())


@POSIX
def test_a_link_in_place_of_the_folder_is_refused(cache_home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    cache_home.parent.mkdir(parents=True)
    cache_home.symlink_to(real)
    assert cache.open_cache() is None
    cache.compile_cached("z = 1\n", "<m>")
    assert not list(real.iterdir())


def test_the_cache_can_be_switched_off_and_moved(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.DISABLE_VARIABLE, "1")
    assert cache.cache_dir() is None
    cache.compile_cached("z = 1\n", "<m>")
    assert not cache_home.exists()
    monkeypatch.delenv(cache.DISABLE_VARIABLE)
    monkeypatch.setenv(cache.LOCATION_VARIABLE, str(tmp_path / "moved"))
    assert cache.cache_dir() == tmp_path / "moved"


def test_only_the_newest_entries_of_a_kind_are_kept(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    for number in range(6):
        cache.compile_cached(f"x = {number}\n", "<m>")
        newest = max(_entries(cache_home, "code"), key=lambda p: p.stat().st_mtime_ns)
        os.utime(newest, (number + 1, number + 1))
    assert len(_entries(cache_home, "code")) == 3


def test_templates_use_the_verified_cache_and_survive_damage(cache_home: Path) -> None:
    import jinja2

    from uml2perf.generation import _JINJA_OPTIONS, _template_cache

    folder = Path(__file__).resolve().parents[1] / "templates"

    def render() -> str:
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(folder)),
            undefined=jinja2.StrictUndefined,
            bytecode_cache=_template_cache(),
            **_JINJA_OPTIONS,
        )
        return env.get_template("model_graph.dot.jinja").render(title="t", graph_id="g", lines=["a -> b;"])

    text = render()
    entries = _entries(cache_home, "jinja")
    assert entries and "a -> b;" in text
    for entry in entries:
        entry.write_bytes(b"j2garbage")
    assert render() == text
    assert all(e.read_bytes().startswith(cache.MAGIC) for e in _entries(cache_home, "jinja"))


def test_no_pickle_anywhere_in_the_cache() -> None:
    source = Path(cache.__file__).read_text() + Path(cache.__file__).with_name("generation.py").read_text()
    assert "pickle" not in source.replace("unpickles", "").replace("Nothing is pickled", "")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.binary(max_size=600), cut=st.integers(0, 5000), flips=st.lists(st.integers(0, 5000), max_size=8)
)
def test_fuzzed_entries_are_misses_never_crashes(
    cache_home: Path, data: bytes, cut: int, flips: list[int]
) -> None:
    """Random bytes, truncations and bit flips of a real entry: always a clean miss (or the right code)."""
    store = cache.open_cache()
    assert store is not None
    key = cache.key_of("fuzz")
    good = __import__("marshal").dumps(compile("q = 5\n", "<fuzz>", "exec"))
    store.put("code", key, good)
    entry = cache_home / f"code-{key}"
    raw = bytearray(entry.read_bytes())
    for flip in flips:
        raw[flip % len(raw)] ^= 0x5A
    variants = [bytes(raw), bytes(raw[: cut % (len(raw) + 1)]), data, cache.MAGIC + data]
    for variant in variants:
        entry.write_bytes(variant)
        payload = store.get("code", key)
        assert payload is None or payload == good
        code = cache.load_code(payload)
        if code is not None:
            scope: dict[str, int] = {}
            exec(code, scope)  # noqa: S102
            assert scope["q"] == 5


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_repeated_run_imports_neither_lxml_nor_jinja(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    env.pop(cache.LOCATION_VARIABLE, None)
    probe = (
        "import sys, json; from uml2perf.cli import main; code = main(['run', 'prophet.uml', '--json']); "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('lxml', 'jinja2'))), "
        "file=sys.stderr); sys.exit(code)"
    )
    first = _run(["-c", probe], tmp_path, env)
    second = _run(["-c", probe], tmp_path, env)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert json.loads(first.stdout)["time"] == json.loads(second.stdout)["time"]
    assert "lxml" in first.stderr.splitlines()[-1]
    assert json.loads(second.stderr.splitlines()[-1]) == []
    (tmp_path / "prophet.uml").write_text((tmp_path / "prophet.uml").read_text().replace("121/P", "242/P"))
    third = _run(["-c", probe], tmp_path, env)
    assert json.loads(third.stdout)["time"] > json.loads(second.stdout)["time"]  # a changed input is a miss


def test_a_forged_module_entry_executes_nothing(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    assert _run(["-m", "uml2perf", "run", "prophet.uml"], tmp_path, env).returncode == 0
    marker = tmp_path / "pwned"
    evil = __import__("marshal").dumps(compile(f"open({str(marker)!r}, 'w').close()", "<x>", "exec"))
    for entry in (tmp_path / "xdg" / "uml2perf").iterdir():
        raw = entry.read_bytes()
        entry.write_bytes(raw[: len(cache.MAGIC) + 32] + raw[len(cache.MAGIC) + 32 :][:-10] + evil)
    done = _run(["-m", "uml2perf", "run", "prophet.uml"], tmp_path, env)
    assert done.returncode == 0 and "194.18" in done.stdout and not marker.exists()


def test_run_prints_the_warnings_convert_prints_also_from_the_cache(tmp_path: Path) -> None:
    source = (SAMPLES / "prophet.uml").read_text()
    (tmp_path / "m.uml").write_text(source)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    convert = _run(["-m", "uml2perf", "convert", "m.uml", "-o", "m.py"], tmp_path, env)
    warned = [line for line in convert.stderr.splitlines() if "warning" in line]
    first = _run(["-m", "uml2perf", "run", "m.uml"], tmp_path, env)
    second = _run(["-m", "uml2perf", "run", "m.uml"], tmp_path, env)
    for line in warned:
        assert line in first.stderr and line in second.stderr


def test_random_damage_to_every_entry_never_breaks_a_run(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    assert _run(["-m", "uml2perf", "run", "prophet.uml"], tmp_path, env).returncode == 0
    rng = random.Random(7)
    for _ in range(4):
        for entry in (tmp_path / "xdg" / "uml2perf").iterdir():
            raw = bytearray(entry.read_bytes())
            for _ in range(rng.randint(1, 20)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            entry.write_bytes(bytes(raw[: rng.randint(0, len(raw))]))
        done = _run(["-m", "uml2perf", "run", "prophet.uml"], tmp_path, env)
        assert done.returncode == 0 and "194.18" in done.stdout, done.stderr
        assert "Traceback" not in done.stderr


def test_warnings_module_is_quiet_for_a_private_folder(cache_home: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.open_cache() is not None


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=2048), st.sampled_from([None, 0, cache.SMALL_INPUT_BYTES]))
def test_sha256_is_sha256_whichever_code_computes_it(data: bytes, expected: int | None) -> None:
    import hashlib

    digest = cache.sha256(data[:7], expected_bytes=expected)
    digest.update(data[7:])
    assert digest.hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_large_input_is_hashed_as_a_small_one() -> None:
    import hashlib

    data = bytes(range(256)) * (cache.SMALL_INPUT_BYTES // 256 + 1)
    assert cache.sha256(data).digest() == hashlib.sha256(data).digest()


def _feed(fifo: Path, *payloads: bytes) -> threading.Thread:
    """A writer that sends each payload through the FIFO, opening it once per payload."""

    def send() -> None:
        for payload in payloads:
            with open(fifo, "wb") as stream:
                stream.write(payload)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_each_input_is_read_once_for_the_key_and_the_model(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file replaced between two reads could store a prediction under another content's key."""
    from uml2perf import api
    from uml2perf_runtime.output import files

    model = tmp_path / "m.uml"
    car = tmp_path / "car.toml"
    shutil.copy(SAMPLES / "prophet.uml", model)
    car.write_text("[variables]\nP = 4\n")
    opened: list[str] = []
    real = files.read_input

    def counted(path: object, **options: object) -> bytes:
        if not isinstance(path, files.InputBytes):
            opened.append(os.path.basename(str(path)))
        return real(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "read_input", counted)
    api.load_spec(model, sidecar=car)
    assert sorted(opened) == ["car.toml", "m.uml"]


def _predicted(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> float:
    from uml2perf.cli import main

    capsys.readouterr()
    assert main(["run", *arguments, "--json"]) == 0
    return float(json.loads(capsys.readouterr().out)["time"])


def test_a_file_replaced_during_a_run_cannot_poison_the_cache(
    cache_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file holds A when first read and B on any later read (``mv`` during a run)."""
    from uml2perf_runtime.output import files

    prophet = (SAMPLES / "prophet.uml").read_bytes()
    other = prophet.replace(b"121/P", b"5121/P")
    changing = tmp_path / "m.uml"
    changing.write_bytes(prophet)
    real = files.read_input
    reads: list[int] = []

    def replaced_after_first_read(path: object, **options: object) -> bytes:
        data = real(path, **options)  # type: ignore[arg-type]
        if str(path) == str(changing) and not isinstance(path, files.InputBytes):
            reads.append(1)
            if len(reads) > 1:
                return other
        return data

    monkeypatch.setattr(files, "read_input", replaced_after_first_read)
    first = _predicted([str(changing)], capsys)
    monkeypatch.setattr(files, "read_input", real)
    (tmp_path / "a.uml").write_bytes(prophet)
    assert first == pytest.approx(194.18, abs=0.01)
    assert _predicted([str(tmp_path / "a.uml")], capsys) == first  # the entry of A holds A's model


def test_a_fifo_input_works_with_the_cache_on(
    cache_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "m.uml"
    car = tmp_path / "car.toml"
    os.mkfifo(fifo)
    os.mkfifo(car)
    model_writer = _feed(fifo, (SAMPLES / "prophet.uml").read_bytes())
    car_writer = _feed(car, b"[variables]\nP = 4\n")
    assert _predicted([str(fifo), "--sidecar", str(car)], capsys) > 0
    model_writer.join(timeout=5)
    car_writer.join(timeout=5)


@POSIX
def test_a_fifo_in_place_of_an_entry_is_skipped_not_waited_for(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "prophet.uml", tmp_path / "prophet.uml")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(cache.DISABLE_VARIABLE, None)
    env.pop(cache.LOCATION_VARIABLE, None)
    assert _run(["-m", "uml2perf", "run", "prophet.uml"], tmp_path, env).returncode == 0
    replaced = 0
    for entry in (tmp_path / "xdg" / "uml2perf").iterdir():
        if entry.name.startswith(("module-", "jinja-", "code-")):
            entry.unlink()
            os.mkfifo(entry, 0o600)
            replaced += 1
    assert replaced >= 2
    done = _run(["-m", "uml2perf", "run", "prophet.uml"], tmp_path, env)
    assert done.returncode == 0 and "194.18" in done.stdout, done.stderr


def test_fifo_machine_files_and_sidecars_work_in_sweep_with_the_cache_on(
    cache_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from uml2perf.cli import main

    machine = tmp_path / "machine.toml"
    car = tmp_path / "car.toml"
    os.mkfifo(machine)
    os.mkfifo(car)
    writers = [
        _feed(machine, (SAMPLES / "machines" / "laptop.toml").read_bytes()),
        _feed(car, b'[elements."A2"]\ncost = "2"\n'),
    ]
    capsys.readouterr()
    arguments = ["sweep", str(SAMPLES / "prophet.uml"), "--grid", "procs=2,4", "--no-analytic"]
    assert main([*arguments, "--machine", str(machine), "--sidecar", str(car)]) == 0
    for writer in writers:
        writer.join(timeout=5)
        assert not writer.is_alive()
    assert "procs" in capsys.readouterr().out
