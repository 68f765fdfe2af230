"""The JSON shape of one data version, as commands print it and as
expressions see it (content parsed when it is JSON, text when it decodes)."""

from __future__ import annotations

import json

from swamp.data.repository import DataRecord


def record_json(rec: DataRecord, content: bytes | None) -> dict:
    m = rec.meta
    out = {"name": m.name, "version": m.version, "specName": m.specName, "kind": m.kind,
           "contentType": m.contentType, "createdAt": m.createdAt, "size": m.size, "sha256": m.sha256,
           "tags": dict(sorted(m.tags.items())), "lifetime": m.lifetime}
    if content is not None:
        if m.contentType == "application/json":
            out["content"] = json.loads(content)
        else:
            try:
                out["content"] = content.decode()
            except UnicodeDecodeError:
                out["content"] = None
                out["binary"] = True
    return out
