"""The SimPy the runtime is pinned to still has the internals its hot paths use.

The direct routes schedule events without SimPy's public calls (``env._queue``, ``env._eid``,
``env._now``, an event's ``_ok``/``_value``, a timeout's ``_delay``): this test fails first when
an installed SimPy changes them, before a prediction goes wrong.
"""

from __future__ import annotations

from importlib.metadata import version

import simpy
from simpy.core import NORMAL
from simpy.events import PENDING, Event, Timeout


def test_the_installed_simpy_is_in_the_pinned_range() -> None:
    major, minor = (int(x) for x in version("simpy").split(".")[:2])
    assert (major, minor) == (4, 1)


def test_the_internals_the_runtime_schedules_through_exist() -> None:
    env = simpy.Environment()
    assert env._now == 0 and isinstance(env._queue, list)
    eid = next(env._eid)
    timeout = Timeout(env, 2.5)
    assert timeout._delay == 2.5 and timeout._ok is True
    event = Event(env)
    assert event._value is PENDING
    event._ok = True
    event._value = None
    env.schedule(event, NORMAL, 1.0)
    env.run()
    assert env._now == 2.5 and next(env._eid) > eid
