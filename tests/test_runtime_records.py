"""Runtime records survive pickling (sweep workers and Dask receive machines and model specs)."""

from __future__ import annotations

import pickle

import pytest

from uml2perf_runtime.engine.limits import Limits
from uml2perf_runtime.engine.records import FrozenRecord
from uml2perf_runtime.operations.registry import OPERATIONS
from uml2perf_runtime.platform.machine import Device, Link, Machine


@pytest.mark.parametrize(
    "record",
    [
        Machine(),
        Machine(nodes=3, cores_per_node=8, speed=2.5),
        Link(1e-6, 1e9),
        Limits(),
        OPERATIONS["send"],
        OPERATIONS["send"].parameters[0],
    ],
    ids=lambda record: type(record).__name__,
)
def test_a_record_pickles_to_an_equal_record(record: FrozenRecord) -> None:
    again = pickle.loads(pickle.dumps(record))
    assert again == record
    assert type(again) is type(record)
    assert repr(again) == repr(record)


def test_a_device_pickles_to_an_equal_device() -> None:
    machine = Machine()
    devices = [value for value in vars(type(machine)).values() if isinstance(value, Device)]
    for device in devices:
        assert pickle.loads(pickle.dumps(device)) == device


def test_an_unpickled_record_stays_immutable() -> None:
    again = pickle.loads(pickle.dumps(Machine()))
    with pytest.raises(AttributeError):
        again.nodes = 5  # type: ignore[misc]
