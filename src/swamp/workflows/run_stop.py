"""How a run stops: a cancel request from any peer (a marker file, seen by
a pull at most every CANCEL_CHECK_INTERVAL), an interrupt, or its parent
run stopping; and, when it does, the processes of its local steps in
flight are stopped (swamp.util.processes)."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable

from swamp.util import tracing
from swamp.workflows import records
from swamp.workflows.run_state import RunState

CANCEL_CHECK_INTERVAL = 1.0  # a cancel from any peer is seen within about this long


class Stopping:
    """Whether the run stops, looked at from any of its threads."""

    def __init__(self, state: RunState, *, outer_stop: Callable[[], bool] | None = None) -> None:
        self.state = state
        self.outer_stop = outer_stop  # a nested run's parent's should_stop
        #: the swamp.util.processes.Control of each local step in flight: a cancel stops their processes
        self.controls: set = set()
        self._watching = threading.Lock()  # one thread at a time looks for a cancel request
        self._last_cancel_check = time.monotonic()

    def should_stop(self) -> bool:
        """Whether the run stops. When it does, the processes of its local
        steps in flight are stopped."""
        state = self.state
        if self.outer_stop is not None and not state.stop.is_set() and self.outer_stop():
            state.log("the parent run stops")
            state.cancel_requested = True
            state.stop.set()
        if state.stop.is_set():
            self.stop_steps()
            return True
        if not self._watching.acquire(blocking=False):
            return False  # another thread is looking right now
        try:
            now = time.monotonic()
            if now - self._last_cancel_check < CANCEL_CHECK_INTERVAL:
                return False
            self._last_cancel_check = now
            state.host.watch()
            marker = records.cancel_path(state.run.workflowId, state.run.id)
            if state.ds.exists(marker):
                from swamp.workflows.runs import cancel_requester

                by = cancel_requester(state.ds, marker)
                state.log("cancel requested" + (f" by {by}" if by else ""))
                with state.lock:
                    state.run.cancelledBy = by
                state.cancel_requested = True
                state.stop.set()
        finally:
            self._watching.release()
        if state.stop.is_set():
            self.stop_steps()
            return True
        return False

    def stop_steps(self) -> None:
        """Cancel every local step in flight: its processes get SIGTERM,
        then SIGKILL after a grace period (swamp.util.processes)."""
        with self.state.lock:
            controls = list(self.controls)
        for control in controls:
            control.cancel()

    @contextlib.contextmanager
    def cancellable(self, timeout: float | None = None):
        """While a local step's method runs: its Control, registered so a
        cancel stops it, and a watch for the cancel request (a pull at most
        every CANCEL_CHECK_INTERVAL) however the step was scheduled. With a
        ``timeout`` (seconds), the control is stopped when it runs out, its
        reason the step's error (workflows/retries.py)."""
        from swamp.util import processes
        from swamp.workflows.retries import timed_out

        control = processes.Control()
        timer = None
        if timeout is not None:
            timer = threading.Timer(timeout, lambda: control.cancel(reason=timed_out(timeout)))
            timer.daemon = True
            timer.start()
        with self.state.lock:
            self.controls.add(control)
        try:
            with self.watching():
                if self.state.stop.is_set():  # stopped while the step was being prepared
                    control.cancel()
                yield control
        finally:
            if timer is not None:
                timer.cancel()
            with self.state.lock:
                self.controls.discard(control)

    @contextlib.contextmanager
    def watching(self):
        """A thread that looks for the run's cancel request (a pull at most
        every CANCEL_CHECK_INTERVAL) while this is open: what ``cancellable``
        keeps while a step's method runs, and what a step's session opens
        under while it waits before its method (a one-lane run's model
        lease, app/one_lane_runs.py). Yields the run's stop event, set as
        soon as a cancel request is seen, so such a wait ends on the cancel
        rather than when the lease comes."""
        done = threading.Event()

        def watch() -> None:
            while not done.wait(CANCEL_CHECK_INTERVAL / 4):
                try:
                    if self.should_stop():
                        return
                except Exception:  # noqa: BLE001 - a failed pull is retried at the next look
                    pass

        watcher = threading.Thread(target=tracing.carry(watch), name="swamp-cancel-watch", daemon=True)
        watcher.start()
        try:
            yield self.state.stop
        finally:
            done.set()
            watcher.join()

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds``, or less when the run stops: then True."""
        end = time.monotonic() + seconds
        while not self.should_stop():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.state.stop.wait(min(left, CANCEL_CHECK_INTERVAL / 4))
        return True
