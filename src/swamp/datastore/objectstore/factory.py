"""open_store: a store from a URL or a config mapping, wrapped in retries.

    open_store("s3://bucket/prefix")
    open_store("gs://bucket/prefix")
    open_store("/shared/dir")                       # or file:///shared/dir
    open_store({"type": "s3", "bucket": "b", "prefix": "team",
                "endpoint_url": "http://127.0.0.1:8333", "region": "us-east-1"})

Backends are imported only when asked for, so that commands that never touch
an object store never import obstore or google-cloud-storage.
"""

from __future__ import annotations

from typing import Any, Mapping

from .base import ObjectStore
from .retry import RetryingObjectStore

_KEYS = {
    "s3": {"type", "bucket", "prefix", "endpoint_url", "region", "allow_http", "timeout_s", "connect_timeout_s",
           "response_timeout_s", "retry"},
    "gcs": {"type", "bucket", "prefix", "endpoint_url", "project", "timeout_s", "connect_timeout_s",
            "response_timeout_s", "retry"},
    "local": {"type", "path", "retry"},
}


def parse_store_url(url: str) -> dict[str, Any]:
    import urllib.parse  # here: a config mapping (what a repository stores) needs none of it (~2 ms)

    parsed = urllib.parse.urlparse(url)
    if parsed.scheme in ("s3", "gs", "gcs"):
        return {"type": "s3" if parsed.scheme == "s3" else "gcs",
                "bucket": parsed.netloc, "prefix": parsed.path.strip("/")}
    if parsed.scheme == "file":
        return {"type": "local", "path": urllib.parse.unquote(parsed.path)}
    if parsed.scheme == "":
        return {"type": "local", "path": url}
    raise ValueError(f"unknown object store URL {url!r}: use s3://, gs://, file:// or a directory")


def open_store(spec: str | Mapping[str, Any]) -> ObjectStore:
    """``retry`` in a mapping: False for a bare store, or RetryingObjectStore
    keyword arguments (attempts, base_delay, max_delay)."""
    config = parse_store_url(spec) if isinstance(spec, str) else dict(spec)
    kind = config.get("type")
    if kind not in _KEYS:
        raise ValueError(f"unknown object store type {kind!r}: use one of {sorted(_KEYS)}")
    unknown = set(config) - _KEYS[kind]
    if unknown:
        raise ValueError(f"unknown {kind} object store settings: {sorted(unknown)}")
    retry = config.pop("retry", {})
    del config["type"]
    store: ObjectStore
    if kind == "s3":
        from .s3 import S3ObjectStore

        store = S3ObjectStore(**config)
    elif kind == "gcs":
        from .gcs import GCSObjectStore

        store = GCSObjectStore(**config)
    else:
        from .local import LocalDirObjectStore

        store = LocalDirObjectStore(config["path"])
    if retry is False:
        return store
    return RetryingObjectStore(store, **(retry or {}))
