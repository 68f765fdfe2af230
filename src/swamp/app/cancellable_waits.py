"""The turn of a model's lease that a cancel ends (app/publishing_leases.py).

A step whose method has ended waits for its model's lease to number and
publish its versions: at its process's turn (other items of the run ahead
of it), then at the datastore's lease (a peer, or another run, holding it).
Either wait can last up to SWAMP_LOCK_TIMEOUT_MS; a step cancelled meanwhile
(the run's cancel, `swamp model cancel`, its timeout: its Control's
``cancelled`` event) must end now, publishing nothing, not when the lease
comes.

The datastore's lease takes the event itself (``Datastore.lock(...,
cancelled=)``, datastore/sync/lease.py). The turn is a lock of this
process: it is waited for here, in short slices, the event looked at
between them."""

from __future__ import annotations

import threading
import time

from swamp.errors import SwampError

#: how long the turn is waited for between two looks at the event (seconds)
TURN_SLICE_S = 0.25


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
