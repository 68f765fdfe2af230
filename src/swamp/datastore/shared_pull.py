"""One pull shared by the reads that arrive together (swamp serve's request
threads), without any read seeing less than a pull of its own would show.

A read needs a pull that *started after the read arrived*: only that one
can bring every commit published before the read was asked for. So a read
that arrives while a pull is under way does not take that pull's answer;
it waits for it to end and then shares the next one with every other read
that arrived meanwhile. However many reads arrive, at most one pull runs at
a time and each read waits for at most two. A pull that fails fails every
read that shared it (each then reports the error, as its own pull would)."""

from __future__ import annotations

import threading
from typing import Callable

from swamp.datastore.sync.counts import SyncCounts


class SharedPull:
    def __init__(self, pull: Callable[[], SyncCounts]) -> None:
        self._pull = pull
        self._cond = threading.Condition()
        self._started = 0  # pulls started so far; pull number N started after every read that wants N arrived
        self._finished = 0
        self._running = False
        self._outcomes: dict[int, tuple[SyncCounts | None, BaseException | None]] = {}

    def pull(self) -> SyncCounts:
        """A pull that started after this call began: this thread's own, or
        the one it shares. The counts are those of the pull this thread ran
        (empty when it shared another thread's)."""
        with self._cond:
            wanted = self._started + 1  # the next pull to start; the running one (if any) began too early
            while self._finished < wanted:
                if self._running:
                    self._cond.wait()
                    continue
                self._running = True
                self._started += 1
                mine = self._started
                self._cond.release()
                counts, error = None, None
                try:
                    counts = self._pull()
                except BaseException as e:  # noqa: BLE001  (handed to every read that shared it)
                    error = e
                finally:
                    self._cond.acquire()
                    self._running = False
                    self._finished = mine
                    self._outcomes[mine] = (counts, error)
                    for old in [n for n in self._outcomes if n < mine - 64]:
                        del self._outcomes[old]  # kept a while for the readers still waking up
                    self._cond.notify_all()
                if mine == wanted:
                    if error is not None:
                        raise error
                    return counts
            counts, error = self._outcomes.get(wanted, (None, None))
        if error is not None:
            raise error
        return SyncCounts()
