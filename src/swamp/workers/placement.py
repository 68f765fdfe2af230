"""Labels and Dask resources. A worker with label ``region=eu`` and a
concurrency of N carries the resource ``region=eu: N`` (and ``swamp: N``,
which every swamp step asks for, so a Dask worker that is not a swamp worker
never gets one); a step placed on ``{region: eu}`` asks for one of each."""

from __future__ import annotations

import re

from swamp.errors import UsageError

SWAMP_RESOURCE = "swamp"
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def parse_labels(pairs) -> dict[str, str]:
    """``["region=eu", "gpu=yes"]`` -> ``{"region": "eu", "gpu": "yes"}``."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = str(pair).partition("=")
        if not sep or not _LABEL_RE.match(key) or not _LABEL_RE.match(value):
            raise UsageError(f"label {pair!r} is not KEY=VALUE",
                             hint="letters, digits, '_', '.', '-'; for example --label region=eu")
        if key == SWAMP_RESOURCE:
            raise UsageError(f"{SWAMP_RESOURCE!r} is not a label name swamp lets you use")
        out[key] = value
    return out


def resource_name(key: str, value: str) -> str:
    return f"{key}={value}"


def worker_resources(labels: dict[str, str], concurrency: int) -> dict[str, float]:
    res = {resource_name(k, v): float(concurrency) for k, v in labels.items()}
    res[SWAMP_RESOURCE] = float(concurrency)
    return res


def step_resources(labels: dict[str, str]) -> dict[str, float]:
    res = {resource_name(k, v): 1.0 for k, v in labels.items()}
    res[SWAMP_RESOURCE] = 1.0
    return res


def labels_of(resources: dict) -> dict[str, str]:
    """A worker's labels, read back from its resources."""
    out = {}
    for name in resources or {}:
        key, sep, value = name.partition("=")
        if sep:
            out[key] = value
    return out


def fits(worker: dict, labels: dict[str, str], target: str | None) -> bool:
    """Whether a worker of ``scheduler_info()["workers"]`` can take the step."""
    resources = worker.get("resources") or {}
    if SWAMP_RESOURCE not in resources:
        return False
    if target is not None and str(worker.get("name")) != target:
        return False
    return all(resource_name(k, v) in resources for k, v in labels.items())
