"""Small value classes without the cost of @dataclass: creating a dataclass
runs generated code (about half a millisecond each, at import), and the
module loads inspect. ``Plain`` gives a class whose ``__slots__`` name its
fields the ``repr`` and ``==`` a dataclass would have; the class writes its
own ``__init__``."""

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
