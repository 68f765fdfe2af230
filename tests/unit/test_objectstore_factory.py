"""open_store and the S3 credential lookup (no server needed: building a
store sends nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swamp.datastore.objectstore.factory import open_store, parse_store_url
from swamp.datastore.objectstore.gcs import GCSObjectStore
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.retry import RetryingObjectStore
from swamp.datastore.objectstore.s3 import S3ObjectStore, shared_file_credentials


@pytest.mark.parametrize("url, config", [
    ("s3://bucket/team/a", {"type": "s3", "bucket": "bucket", "prefix": "team/a"}),
    ("gs://bucket", {"type": "gcs", "bucket": "bucket", "prefix": ""}),
    ("file:///srv/shared%20store", {"type": "local", "path": "/srv/shared store"}),
    ("/srv/shared", {"type": "local", "path": "/srv/shared"}),
])
def test_urls(url: str, config: dict) -> None:
    assert parse_store_url(url) == config


def test_a_store_is_wrapped_in_retries_unless_told_not_to(tmp_path: Path) -> None:
    store = open_store(str(tmp_path))
    assert isinstance(store, RetryingObjectStore)
    assert isinstance(store.inner, LocalDirObjectStore)
    assert store.name == f"file://{tmp_path.resolve()}/"
    bare = open_store({"type": "local", "path": str(tmp_path), "retry": False})
    assert isinstance(bare, LocalDirObjectStore)
    tuned = open_store({"type": "local", "path": str(tmp_path), "retry": {"attempts": 2}})
    assert isinstance(tuned, RetryingObjectStore) and tuned.attempts == 2


def test_s3_and_gcs_from_mappings() -> None:
    s3 = open_store({"type": "s3", "bucket": "b", "prefix": "/team/", "endpoint_url": "http://127.0.0.1:9",
                     "region": "eu-west-1", "retry": False})
    assert isinstance(s3, S3ObjectStore) and s3.name == "s3://b/team/"
    gcs = open_store({"type": "gcs", "bucket": "b", "endpoint_url": "127.0.0.1:9", "retry": False})
    assert isinstance(gcs, GCSObjectStore) and gcs.endpoint == "http://127.0.0.1:9"


@pytest.mark.parametrize("spec, message", [
    ({"type": "azure"}, "unknown object store type"),
    ({"type": "s3", "bucket": "b", "endpoint": "x"}, "unknown s3 object store settings"),
    ("ftp://host/x", "unknown object store URL"),
])
def test_bad_specs_are_refused(spec: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_store(spec)  # type: ignore[arg-type]


def test_credentials_come_from_the_shared_file_when_the_environment_has_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    creds = tmp_path / "credentials"
    creds.write_text("[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = s1\n"
                     "[team]\naws_access_key_id = AKTEAM\naws_secret_access_key = s2\naws_session_token = t\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    assert shared_file_credentials() == {"access_key_id": "AKDEFAULT", "secret_access_key": "s1"}
    monkeypatch.setenv("AWS_PROFILE", "team")
    assert shared_file_credentials() == {"access_key_id": "AKTEAM", "secret_access_key": "s2",
                                         "session_token": "t"}
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKENV")  # the environment wins, and obstore reads it itself
    assert shared_file_credentials() == {}
