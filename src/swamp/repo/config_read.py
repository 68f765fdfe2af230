"""Reading .swamp.yaml on the fast path (see util.documents.read_light);
RepoConfig in config.py stays the one schema."""

from __future__ import annotations

from typing import Any

from swamp.util.documents import DocView, read_light, validate

_OPT_STR = (str, type(None))
_FIELDS = {"swampVersion": str, "initializedAt": str, "repoId": str, "datastore": (dict, type(None)),
           "defaultVault": _OPT_STR, "autoGc": bool, "logLevel": _OPT_STR,
           "managedConfig": (bool, type(None))}
_DEFAULTS = {"datastore": None, "defaultVault": None, "autoGc": False, "logLevel": None, "managedConfig": None}
_DS_FIELDS = {"type": str, "path": _OPT_STR, "bucket": _OPT_STR, "prefix": str, "namespace": str,
              "endpointUrl": _OPT_STR, "region": _OPT_STR, "hydration": str,
              "networkTimeout": (int, float, type(None))}
_DS_DEFAULTS = {"path": None, "bucket": None, "prefix": "", "namespace": "default", "endpointUrl": None,
                "region": None, "hydration": "full", "networkTimeout": None}


def _plain_timeout(value: Any) -> bool:
    """A value the light path may take as it is; anything else (a bool, 0,
    too large) goes through the schema, which says what is wrong."""
    return value is None or (not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value <= 600)


def _schema():
    from swamp.repo.config import RepoConfig

    return RepoConfig


def read_config(data: Any, source: str) -> DocView:
    ds = data.get("datastore") if isinstance(data, dict) else None
    simple_ds = ds is None or (isinstance(ds, dict) and ds.get("type") in ("filesystem", "s3", "gcs")
                               and ds.get("hydration", "full") in ("full", "lazy")
                               and _plain_timeout(ds.get("networkTimeout"))
                               and all(k in _DS_FIELDS and isinstance(v, _DS_FIELDS[k]) for k, v in ds.items()))
    if simple_ds:
        doc = read_light(data, source, fields=_FIELDS, required=("swampVersion", "initializedAt", "repoId"),
                         defaults=_DEFAULTS, schema=_schema)
    else:
        doc = DocView(validate(_schema(), data, source).model_dump())
    if doc.datastore is not None:
        doc["datastore"] = DocView({**_DS_DEFAULTS, **doc.datastore})
    return doc
