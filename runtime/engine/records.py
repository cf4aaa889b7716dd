"""Immutable records compared by value, what a frozen dataclass gives, without building it at import.

Generating a dataclass's methods (``__init__``, ``__eq__``, ``__hash__``, ``__repr__``, the frozen
``__setattr__``) costs about 0.1-0.3 ms per class at import, more than the rest of most runtime
modules, and every simulation imports them.  A subclass of :class:`FrozenRecord` names its fields
in ``_FIELDS`` and writes its ``__init__`` with :func:`object.__setattr__`.
"""

from __future__ import annotations

from typing import Any, TypeVar

_R = TypeVar("_R", bound="FrozenRecord")


class FrozenRecord:
    """Base of immutable records: equality, hash and repr over ``_FIELDS``, in their order."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{self.__class__.__qualname__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by field values (sweep workers and Dask receive machines and specs this way)."""
        return (_rebuild, (self.__class__, self._key()))

    def _replace(self: _R, **changes: Any) -> _R:
        """A copy with some fields changed, made through ``__init__`` (as ``dataclasses.replace``)."""
        values = {name: getattr(self, name) for name in self._FIELDS}
        values.update(changes)
        return self.__class__(**values)


def _rebuild(cls: type[_R], values: tuple[Any, ...]) -> _R:
    """A record back from its field values, without running ``__init__`` (they were checked once)."""
    record = object.__new__(cls)
    for name, value in zip(cls._FIELDS, values, strict=True):
        object.__setattr__(record, name, value)
    return record
