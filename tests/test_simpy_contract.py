"""The SimPy the runtime is pinned to still has the internals ``engine/simpy_access.py`` uses.

Every other runtime module reaches SimPy's internals through that module; each of its accessors
is checked here against the installed SimPy, so this test fails first when an installed SimPy
changes them, before a prediction goes wrong.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

import simpy
from simpy.core import NORMAL as SIMPY_NORMAL
from simpy.events import PENDING as SIMPY_PENDING
from simpy.events import Event, Timeout

from uml2perf_runtime.engine import simpy_access as sa

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"


def test_the_installed_simpy_is_in_the_pinned_range() -> None:
    major, minor = (int(x) for x in version("simpy").split(".")[:2])
    assert (major, minor) == sa.SUPPORTED_SIMPY == (4, 1)
    pinned = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"simpy>=4.1,<4.2"' in pinned


def test_the_constants_are_simpys() -> None:
    assert sa.NORMAL is SIMPY_NORMAL and sa.PENDING is SIMPY_PENDING


def test_queue_and_ids_are_the_environments_and_a_pushed_armed_event_fires() -> None:
    env = simpy.Environment()
    queue, ids = sa.queue_of(env), sa.ids_of(env)
    assert isinstance(queue, list)
    fired: list[float] = []
    ev = sa.armed_event(env)
    assert ev.callbacks == [] and ev.ok and ev.value is None
    ev.callbacks = [lambda e: fired.append(env.now)]
    sa.push(queue, (1.5, sa.NORMAL, next(ids), ev))
    env.run()
    assert fired == [1.5] and ev.callbacks is None and env.now == 1.5
    # processed, it is used again: new callbacks, pushed again
    ev.callbacks = [lambda e: fired.append(env.now)]
    sa.push(queue, (2.0, sa.NORMAL, next(ids), ev))
    env.run()
    assert fired == [1.5, 2.0]


def test_an_armed_timeout_resumes_a_process_with_none() -> None:
    env = simpy.Environment()
    seen: list[object] = []

    def proc() -> object:
        timeout = sa.armed_timeout(env)
        assert isinstance(timeout, Timeout)
        sa.push(sa.queue_of(env), (0.25, sa.NORMAL, next(sa.ids_of(env)), timeout))
        seen.append((yield timeout))
        seen.append(env.now)

    env.process(proc())
    env.run()
    assert seen == [None, 0.25]


def test_trigger_at_succeeds_a_waited_event_later() -> None:
    env = simpy.Environment()
    ev = Event(env)
    got: list[float] = []

    def proc() -> object:
        yield ev
        got.append(env.now)

    env.process(proc())
    sa.trigger_at(env, ev, 3.0)
    env.run()
    assert got == [3.0] and ev.ok


def test_timer_value_event_count_and_urgent_callbacks() -> None:
    env = simpy.Environment()
    timer = Timeout(env, 1.0, value=7)
    before = sa.event_count(env)
    stopped: list[float] = []
    sa.schedule_urgent(env, lambda e: stopped.append(env.now))
    assert sa.event_count(env) == before + 1
    env.run()
    assert sa.timer_value(timer) == 7 and stopped == [0.0]
    assert env._now == env.now  # the hot paths read the clock as env._now


def test_a_direct_process_enters_its_generator_and_reports_its_end() -> None:
    env = simpy.Environment()
    ended: list[object] = []
    ctx = SimpleNamespace(computing=False, parked=0)  # no compute, nothing parked to record

    class Sim:
        def _ended(self, ctx: object, exc: Exception | None) -> None:
            ended.append((ctx, exc))

    class Proc(sa.DirectProcess):
        def __init__(self) -> None:
            self.sim = Sim()
            self.ctx = ctx
            super().__init__(env, self._begin())

        def _begin(self) -> object:
            def body() -> object:
                yield env.timeout(1.0)
                value = yield env.timeout(1.0, value="x")
                ended.append(value)

            gen = body()
            first = gen.send(None)
            self._generator = gen
            yield first

    proc = Proc()
    # its resumption is bound once: the method SimPy's start event holds (an equal one)
    assert proc._target.callbacks == [proc.resume] and proc.resume == proc._resume
    env.run()
    assert ended == ["x", (ctx, None)] and proc.ok and env.now == 2.0 and proc._target is None


def test_no_other_runtime_module_touches_simpy_internals() -> None:
    internals = re.compile(
        r"\._queue\b|\._eid\b|\._ok\b|\._value\b|\._target\b|\._delay\b|_active_proc|PENDING"
    )
    for path in RUNTIME.rglob("*.py"):
        if path.name == "simpy_access.py":  # the hot paths import its aliases (push, NORMAL)
            continue
        text = path.read_text(encoding="utf-8")
        assert not internals.search(text), (path, internals.search(text))
        assert "from simpy.core import" not in text, path
