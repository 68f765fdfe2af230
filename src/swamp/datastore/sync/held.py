"""The one record of the locks a datastore holds in this process: per
thread, each lock's name, how many times the thread took it, and the handle
of the real hold (a lease, or a lock file).

The datastore's ``lock()`` reads it to let a thread take a lock it already
holds again at no cost (a workflow step holding a model's lock calling the
runner); the sync engine reads it to know which leases the current thread
writes under (fencing.py)."""

from __future__ import annotations

from _thread import allocate_lock, get_ident  # threading's Lock and get_ident, without loading threading


class _Hold:  # not a dataclass: dataclasses imports inspect (~4 ms of a command)
    __slots__ = ("name", "handle", "count")

    def __init__(self, name: str, handle: object, count: int = 1) -> None:
        self.name, self.handle, self.count = name, handle, count


class HeldLocks:
    def __init__(self) -> None:
        self._holds: dict[int, list[_Hold]] = {}
        self._mutex = allocate_lock()

    def _mine(self) -> list[_Hold]:
        return self._holds.setdefault(get_ident(), [])

    def reenter(self, name: str) -> bool:
        """Take ``name`` once more if this thread holds it; False if not."""
        with self._mutex:
            for hold in self._mine():
                if hold.name == name:
                    hold.count += 1
                    return True
            return False

    def holds(self, name: str) -> bool:
        """Whether this thread holds ``name`` now."""
        with self._mutex:
            return any(hold.name == name for hold in self._holds.get(get_ident(), ()))

    def leave(self, name: str) -> None:
        """Undo one ``reenter``."""
        with self._mutex:
            for hold in self._mine():
                if hold.name == name:
                    hold.count -= 1
                    return

    def add(self, name: str, handle: object) -> None:
        """This thread now holds ``name`` for real, through ``handle``."""
        with self._mutex:
            self._mine().append(_Hold(name, handle))

    def remove(self, handle: object) -> None:
        with self._mutex:
            mine = self._mine()
            mine[:] = [h for h in mine if h.handle is not handle]
            if not mine:
                del self._holds[get_ident()]

    def handles_here(self) -> list:
        """The handles this thread holds, innermost last."""
        with self._mutex:
            return [h.handle for h in self._holds.get(get_ident(), ())]
