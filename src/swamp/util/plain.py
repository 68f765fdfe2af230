"""Small value classes without the cost of @dataclass: creating a dataclass
runs generated code (about half a millisecond each, at import), and the
module loads inspect, which every command on a hot path would pay.

A subclass names its fields in ``__slots__`` and writes its own
``__init__``. ``Plain`` gives it the ``repr`` and ``==`` a dataclass would
have; ``Frozen`` what a frozen dataclass has: a repr and ``==`` over the
fields, a hash of them, no assignment after construction (its ``__init__``
sets them with ``object.__setattr__``), and pickling. Fields named in
``_hidden`` (e.g. a cache) are left out of a Frozen's repr, ``==`` and
hash, as a dataclass field with ``repr=False, compare=False`` would be."""

from __future__ import annotations


class Plain:
    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass with eq


class Frozen:
    __slots__ = ()
    _hidden: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, k) for k in self.__slots__ if k not in self._hidden)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(
            f"{k}={getattr(self, k)!r}" for k in self.__slots__ if k not in self._hidden) + ")"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self):
        return (_rebuild, (type(self), tuple(getattr(self, k) for k in self.__slots__)))


def _rebuild(cls: type, values: tuple) -> Frozen:
    obj = object.__new__(cls)
    for k, v in zip(cls.__slots__, values):
        object.__setattr__(obj, k, v)
    return obj
