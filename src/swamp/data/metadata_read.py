"""Reading metadata.yaml on the fast path (see util.documents.read_light):
the field table mirrors DataMetadata, which stays the one schema and speaks
whenever a document is not exactly as expected."""

from __future__ import annotations

from typing import Any

from swamp.util.documents import DocView, read_light, validate

_FIELDS = {
    "id": str, "name": str, "version": int, "specName": str, "kind": str, "contentType": str,
    "lifetime": str, "garbageCollection": (int, str, type(None)), "streaming": bool, "tags": dict,
    "owner": dict, "createdAt": str, "size": int, "sha256": str,
}
_REQUIRED = ("id", "name", "version", "specName", "kind", "contentType", "lifetime", "owner", "createdAt",
             "size", "sha256")
_DEFAULTS = {"garbageCollection": None, "streaming": False, "tags": {}}


def _schema():
    from swamp.data.metadata import DataMetadata

    return DataMetadata


def read_metadata(data: Any, source: str) -> DocView:
    if isinstance(data, dict) and data.get("kind") in ("resource", "file"):
        return read_light(data, source, fields=_FIELDS, required=_REQUIRED, defaults=_DEFAULTS, schema=_schema)
    return DocView(validate(_schema(), data, source).model_dump())
