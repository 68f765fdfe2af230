"""Finding every model's data in the datastore, whether or not its
definition still exists: a model directory is the first UUID-named directory
below ``data/`` (type segments are never UUIDs)."""

from __future__ import annotations

import re
from typing import Iterator

from swamp.data.layout import DATA_ROOT
from swamp.datastore.base import Datastore

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def iter_models(ds: Datastore) -> Iterator[tuple[str, str]]:
    """(model type, model id) for every model with a data directory, sorted."""

    def visit(rel: str, segments: list[str]) -> Iterator[tuple[str, str]]:
        for child in ds.listdir(rel):
            if child.startswith(".") or child.startswith("_"):
                continue
            if UUID_RE.match(child):
                if segments:
                    yield "/".join(segments), child
            elif ds.local_path(f"{rel}/{child}").is_dir():
                yield from visit(f"{rel}/{child}", segments + [child])

    yield from visit(DATA_ROOT, [])
