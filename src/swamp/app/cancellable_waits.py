"""Waits for a model's lease that a cancel ends (app/publishing_leases.py).

A step whose method has ended waits for its model's lease to number and
publish its versions: at its process's turn (other items of the run ahead
of it), then at the datastore's lease (a peer, or another run, holding it).
Either wait can last up to SWAMP_LOCK_TIMEOUT_MS; a step cancelled meanwhile
(the run's cancel, `swamp model cancel`, its timeout: its Control's
``cancelled`` event) must end now, publishing nothing, not when the lease
comes. So each wait is cut into slices, the event looked at between them.

The datastore's lease takes no event, so its wait is a series of shorter
waits: a slice that runs out is tried again, the holder's staleness still
tracked across them (the process-wide watch of datastore/sync/lease.py),
and only the whole deadline is a timeout, reported with its real length.
Slices grow (to ``LONGEST_SLICE_S``) so a long wait polls the store about as
often as one undivided wait would, while a cancel is seen within that."""

from __future__ import annotations

import contextlib
import threading
import time

from swamp.errors import LockTimeoutError, SwampError

#: the first slice of a wait, doubled after each one up to the longest (seconds)
FIRST_SLICE_S, LONGEST_SLICE_S = 0.25, 2.0


def cancelled_error(name: str) -> SwampError:
    return SwampError(f"cancelled while waiting for {name!r}: nothing of the step was published",
                      code="cancelled")


def _slices(total_s: float):
    """(seconds of the next slice, whether it is the last) until ``total_s`` is used up."""
    deadline = time.monotonic() + total_s
    size = FIRST_SLICE_S
    while True:
        left = deadline - time.monotonic()
        if left <= size:
            yield max(left, 0.0), True
            return
        yield size, False
        size = min(size * 2, LONGEST_SLICE_S)


def acquire_turn(turn: threading.RLock, total_s: float, cancelled: threading.Event | None, name: str) -> bool:
    """``turn.acquire`` for up to ``total_s``; a set ``cancelled`` ends the
    wait with the cancel's error. False when the time ran out."""
    if cancelled is None:
        return turn.acquire(timeout=total_s)
    for seconds, _ in _slices(total_s):
        if cancelled.is_set():
            raise cancelled_error(name)
        if turn.acquire(timeout=seconds):
            return True
    if cancelled.is_set():
        raise cancelled_error(name)
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
    with contextlib.ExitStack() as stack:
        for seconds, last in _slices(total_ms / 1000):
            if cancelled.is_set():
                raise cancelled_error(name)
            slice_ms = max(1, int(seconds * 1000))
            try:
                stack.enter_context(datastore.lock(name, timeout_ms=slice_ms))
                break
            except LockTimeoutError as e:
                if last:  # the whole wait ran out: said with its whole length
                    raise LockTimeoutError(e.message.replace(f"after {slice_ms} ms", f"after {total_ms} ms", 1),
                                           hint=e.hint) from None
        if cancelled.is_set():
            raise cancelled_error(name)
        yield
