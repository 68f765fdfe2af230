"""Random waits that spread racing peers apart (retries, lost commit
races, lease polls). They are drawn from the system's randomness, never
from the random module's shared generator: a model's own code may have
seeded that one for a repeatable sequence, and a lease heartbeat or a
retry in another thread drawing from it would change the sequence under
it. Nothing here needs to be unpredictable; it needs only to differ from
peer to peer. (And importing random costs a short command about 1 ms.)"""

from __future__ import annotations

import os

_SCALE = float(1 << 53)


def uniform(low: float, high: float) -> float:
    """A number in [low, high), evenly spread."""
    return low + (high - low) * (int.from_bytes(os.urandom(7), "big") >> 3) / _SCALE
