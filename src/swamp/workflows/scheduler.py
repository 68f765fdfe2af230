"""Running the units of one topological level: concurrently, within caps,
in a deterministic order.

Units that share a lane run one after another in the order given: the
steps of one model do, unless a cap (``concurrency``) is set for them
(workflows/run_loop.py ``unit``), so that the versions they write are
numbered in plan order, the same on every run. Lanes run in parallel on a thread pool. Each unit holds a place in its gate (the
step's cap, or the job's) while it runs."""

from __future__ import annotations

import queue
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from swamp.util import tracing


#: How often the dispatcher looks for a stop request while units run.
WATCH_INTERVAL = 1.0


class Gate:
    """A cap on how many units run at once (``size`` 0: no cap). A unit
    that enters it also takes a place in ``parent`` (the run's own cap, the
    workflow's ``concurrency``), and waits when either is full."""

    def __init__(self, size: int, parent: "Gate | None" = None) -> None:
        self.size = size
        self.parent = parent
        self._used = 0
        self._lock = threading.Lock()

    def try_enter(self) -> bool:
        with self._lock:
            if self.size and self._used >= self.size:
                return False
            if self.parent is not None and not self.parent.try_enter():
                return False
            self._used += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self._used -= 1
        if self.parent is not None:
            self.parent.leave()


@dataclass
class Unit:
    lane: Hashable
    gate: Gate
    run: Callable[[], None]


def run_units(units: Sequence[Unit], stop: threading.Event, should_stop: Callable[[], bool]) -> None:
    """Run ``units`` and return when all have run or been passed over
    because ``should_stop()`` said so. The calling thread dispatches: in
    plan order, it starts each lane's next unit as soon as the lane is idle
    and the unit's gate has room, so a full gate never holds up a unit
    behind it whose gate has room. An interrupt in the calling thread sets
    ``stop`` and propagates once the units in flight are done (a local
    step sees ``stop`` and has its processes stopped: engine.cancellable)."""
    lanes: dict[Hashable, deque[Unit]] = {}
    for u in units:
        lanes.setdefault(u.lane, deque()).append(u)
    if len(lanes) == 1:  # nothing to run in parallel: no threads
        for u in units:
            if stop.is_set() or should_stop():
                return
            u.run()
        return
    gates = {id(u.gate): u.gate for u in units}
    width = sum(g.size or len(lanes) for g in gates.values())
    finished: queue.SimpleQueue = queue.SimpleQueue()
    busy: set[Hashable] = set()
    errors: list[BaseException] = []

    def work(lane: Hashable, u: Unit) -> None:
        try:
            u.run()
        except BaseException as e:  # handed to the dispatcher, raised there
            errors.append(e)
        finally:
            u.gate.leave()
            finished.put(lane)

    pool = ThreadPoolExecutor(max_workers=max(1, min(len(lanes), width)), thread_name_prefix="swamp-step")
    stopping = False
    try:
        while True:
            if not stopping:
                for lane, queued in lanes.items():
                    if queued and lane not in busy and queued[0].gate.try_enter():
                        busy.add(lane)
                        pool.submit(tracing.carry(work), lane, queued.popleft())
            if not busy:
                break
            try:
                busy.discard(finished.get(timeout=WATCH_INTERVAL))
            except queue.Empty:
                pass  # nothing finished: still look for a stop request, so one is seen within a second
            if not stopping and (stop.is_set() or should_stop()):
                stopping = True
    except BaseException:
        stop.set()
        while busy:  # let the units in flight finish and record themselves
            busy.discard(finished.get())
        raise
    finally:
        pool.shutdown(wait=True)
    if errors:
        raise errors[0]  # a bug in a unit is not swallowed


def run_parallel(tasks: Sequence[Callable[[], None]], cap: int, stop: threading.Event) -> None:
    """Run ``tasks`` (the jobs of one level) at most ``cap`` at a time (0:
    all at once), in the order given."""
    if len(tasks) == 1:
        tasks[0]()
        return
    pool = ThreadPoolExecutor(max_workers=min(len(tasks), cap or len(tasks)), thread_name_prefix="swamp-job")
    try:
        futures = [pool.submit(tracing.carry(t)) for t in tasks]
        wait(futures)
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for f in futures:
        f.result()
