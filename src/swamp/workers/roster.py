"""`swamp worker list`: the swamp workers a scheduler has, read from its
worker table (a Dask worker without the swamp resource is not one)."""

from __future__ import annotations

from swamp.workers import placement


def roster(scheduler: str, *, link=None) -> list[dict]:
    """The swamp workers connected to ``scheduler``: name, address, labels,
    concurrency and the steps each runs now."""
    from swamp.workers.dispatch import connect

    client = connect(scheduler, link=link, insecure_flag="--insecure")
    try:
        info = client.scheduler_info(n_workers=-1).get("workers", {})
        running = client.processing()
    finally:
        client.close()
    rows = []
    for addr, w in info.items():
        resources = w.get("resources") or {}
        if placement.SWAMP_RESOURCE not in resources:
            continue  # a Dask worker, not a swamp one
        steps = sorted(str(k).removeprefix("swamp-step-").rsplit("-", 1)[0]
                       for k in running.get(addr, ()) if str(k).startswith("swamp-step-"))
        rows.append({"name": str(w.get("name")), "address": addr, "labels": placement.labels_of(resources),
                     "concurrency": int(w.get("nthreads") or 0), "running": steps})
    return sorted(rows, key=lambda r: (r["name"], r["address"]))
