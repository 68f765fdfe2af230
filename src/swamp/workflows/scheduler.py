"""Running the units of one topological level: concurrently, within caps,
in a deterministic order.

Units that share a lane (the steps of one model) run one after another in
the order given: they would serialize on the model's lock anyway, and this
way the versions they write are numbered in plan order, the same on every
run. Lanes run in parallel on a thread pool. Each unit holds its gate (a
counting semaphore: the step's, or the job's cap) while it runs."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence


class Gate:
    """A cap on how many units run at once (``size`` 0: no cap)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._sem = threading.Semaphore(size) if size > 0 else None

    def __enter__(self) -> "Gate":
        if self._sem is not None:
            self._sem.acquire()
        return self

    def __exit__(self, *exc) -> None:
        if self._sem is not None:
            self._sem.release()


@dataclass
class Unit:
    lane: Hashable
    gate: Gate
    run: Callable[[], None]


def run_units(units: Sequence[Unit], stop: threading.Event, should_stop: Callable[[], bool]) -> None:
    """Run ``units`` and return when all have run or been passed over
    because ``should_stop()`` said so. An interrupt in the calling thread
    sets ``stop`` so that lanes stop taking new units, then propagates."""
    lanes: dict[Hashable, list[Unit]] = {}
    for u in units:
        lanes.setdefault(u.lane, []).append(u)

    def run_lane(lane: list[Unit]) -> None:
        for u in lane:
            if stop.is_set() or should_stop():
                return
            with u.gate:
                u.run()

    if len(lanes) == 1:  # nothing to run in parallel: no threads
        run_lane(next(iter(lanes.values())))
        return
    gates = {id(u.gate): u.gate for u in units}
    capacity = sum(g.size or len(lanes) for g in gates.values())
    pool = ThreadPoolExecutor(max_workers=max(1, min(len(lanes), capacity)), thread_name_prefix="swamp-step")
    try:
        futures = [pool.submit(run_lane, lane) for lane in lanes.values()]
        wait(futures)
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for f in futures:
        f.result()  # a bug in a unit is not swallowed


def run_parallel(tasks: Sequence[Callable[[], None]], cap: int, stop: threading.Event) -> None:
    """Run ``tasks`` (the jobs of one level) at most ``cap`` at a time (0:
    all at once), in the order given."""
    if len(tasks) == 1:
        tasks[0]()
        return
    pool = ThreadPoolExecutor(max_workers=min(len(tasks), cap or len(tasks)), thread_name_prefix="swamp-job")
    try:
        futures = [pool.submit(t) for t in tasks]
        wait(futures)
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for f in futures:
        f.result()
