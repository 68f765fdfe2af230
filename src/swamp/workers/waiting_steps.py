"""A placed step announced on the scheduler while its dispatcher waits for
a fitting worker to connect, before Dask knows the step (what `swamp worker
queue`, workers/queue.py, reads): the step's name, labels, target, since
when and the dispatcher's client id. Never its arguments or secrets."""

from __future__ import annotations

import time

#: the attribute of the Dask scheduler holding the announcements: key -> entry
ATTR = "_swamp_waiting_steps"


def announce(client, key: str, *, step: str, labels: dict, target: str | None) -> None:
    """Say on the scheduler that ``key`` waits for a fitting worker."""
    entry = {"step": step, "labels": dict(labels), "target": target, "since": time.time(), "client": client.id}
    try:
        client.run_on_scheduler(_put, key=key, entry=entry)
    except Exception:  # noqa: BLE001 - only what `worker queue` shows; never fail a step for it
        pass


def withdraw(client, key: str) -> None:
    try:
        client.run_on_scheduler(_pop, key=key)
    except Exception:  # noqa: BLE001 - as above; a dispatcher gone is dropped by `queue` anyway
        pass


# ---------------------------------------------------------- on the scheduler
def _put(dask_scheduler=None, key=None, entry=None) -> int:
    table = getattr(dask_scheduler, ATTR, None)
    if table is None:
        table = {}
        setattr(dask_scheduler, ATTR, table)
    table[key] = entry
    return 0


def _pop(dask_scheduler=None, key=None) -> int:
    getattr(dask_scheduler, ATTR, {}).pop(key, None)
    return 0
