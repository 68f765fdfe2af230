"""Waits for a model's lease that a cancel ends (app/publishing_leases.py).

A step whose method has ended waits for its model's lease to number and
publish its versions: at its process's turn (other items of the run ahead
of it), then at the datastore's lease (a peer, or another run, holding it).
Either wait can last up to SWAMP_LOCK_TIMEOUT_MS; a step cancelled meanwhile
(the run's cancel, `swamp model cancel`, its timeout: its Control's
``cancelled`` event) must end now, publishing nothing, not when the lease
comes.

The turn is a lock of this process: it is waited for in short slices, the
event looked at between them. The datastore's lease takes no event, so it
is asked for one try at a time (``timeout_ms=0``: one conditional write, and
a read when it is held), the pause between tries spent waiting on the
event, backing off as the lease's own wait does (to a second): a long wait
costs the store about as many requests as one undivided wait would, the
holder's staleness is still tracked across the tries (the process-wide watch
of datastore/sync/lease.py), and only the whole deadline is a timeout,
reported with its real length."""

from __future__ import annotations

import contextlib
import random
import threading
import time

from swamp.errors import LockTimeoutError, SwampError

#: how long the turn is waited for between two looks at the event (seconds)
TURN_SLICE_S = 0.25
#: the pause after the lease's first refused try, doubled after each one up to the longest (seconds)
FIRST_PAUSE_S, LONGEST_PAUSE_S = 0.02, 1.0
#: a try at the datastore's lease: as good as no wait at all
_ONE_TRY_MS = 0


def cancelled_error(name: str) -> SwampError:
    return SwampError(f"cancelled while waiting for {name!r}: nothing of the step was published",
                      code="cancelled")


def acquire_turn(turn: threading.RLock, total_s: float, cancelled: threading.Event | None, name: str) -> bool:
    """``turn.acquire`` for up to ``total_s``; a set ``cancelled`` ends the
    wait with the cancel's error. False when the time ran out."""
    if cancelled is None:
        return turn.acquire(timeout=total_s)
    deadline = time.monotonic() + total_s
    while True:
        if cancelled.is_set():
            raise cancelled_error(name)
        left = deadline - time.monotonic()
        if turn.acquire(timeout=max(0.0, min(TURN_SLICE_S, left))):
            return True
        if left <= TURN_SLICE_S:
            return False


@contextlib.contextmanager
def lease(datastore, name: str, total_ms: int, cancelled: threading.Event | None):
    """``datastore.lock(name)``, waited for up to ``total_ms``; a set
    ``cancelled`` ends the wait (and a lease got just as it was set is let
    go again) with the cancel's error."""
    if cancelled is None:
        with datastore.lock(name):
            yield
        return
    deadline = time.monotonic() + total_ms / 1000
    pause = FIRST_PAUSE_S
    with contextlib.ExitStack() as stack:
        while True:
            if cancelled.is_set():
                raise cancelled_error(name)
            try:
                stack.enter_context(datastore.lock(name, timeout_ms=_ONE_TRY_MS))
                break
            except LockTimeoutError as e:
                left = deadline - time.monotonic()
                if left <= 0:  # the whole wait ran out: said with its whole length
                    raise LockTimeoutError(e.message.replace(f"after {_ONE_TRY_MS} ms", f"after {total_ms} ms", 1),
                                           hint=e.hint) from None
                if cancelled.wait(min(pause * random.uniform(0.5, 1.5), left)):
                    raise cancelled_error(name) from None
                pause = min(pause * 2, LONGEST_PAUSE_S)
        if cancelled.is_set():
            raise cancelled_error(name)
        yield
