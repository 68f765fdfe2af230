"""Shared settings use cases (``swamp config``): a JSON map in the datastore
that every peer sees, changed by read-modify-write inside one session. The
read and the write happen while ``Datastore.editing`` holds other processes
of this checkout off (their edits, and pulls that would replace the file),
so a concurrent `config set` or `datastore sync` never loses a key; peers'
copies merge per key when the session pushes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swamp.app.lifecycle import changing, reading
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import NotFoundError, UnpublishedError
from swamp.extensions.history import record_setting
from swamp.repo import shared_config

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def list_settings(repo: Repo) -> dict:
    with reading(repo):
        return dict(sorted(shared_config.read(repo.datastore).items()))


def get_setting(repo: Repo, key: str) -> Any:
    settings = list_settings(repo)
    if key not in settings:
        raise NotFoundError(f"no setting named {key!r}")
    return settings[key]


def set_setting(repo: Repo, key: str, value: Any) -> dict:
    shared_config.check_key(key)
    ds = repo.datastore
    counts = SyncCounts()
    try:
        with changing(repo, f"config set {key}", into=counts), ds.editing(shared_config.PATH):
            data = shared_config.read(ds)
            data[key] = value
            shared_config.write(ds, data)
            _record_setting(ds, key, value, f"config set {key}")
    except UnpublishedError as e:
        raise e.with_value({"key": key, "value": value, "sync": counts.to_json()})
    return {"key": key, "value": value, "sync": counts.to_json()}


def unset_setting(repo: Repo, key: str) -> dict:
    ds = repo.datastore
    counts = SyncCounts()
    try:
        with changing(repo, f"config unset {key}", into=counts), ds.editing(shared_config.PATH):
            data = shared_config.read(ds)
            if key not in data:
                raise NotFoundError(f"no setting named {key!r}")
            del data[key]
            shared_config.write(ds, data)
            _record_setting(ds, key, None, f"config unset {key}")
    except UnpublishedError as e:
        raise e.with_value({"key": key, "sync": counts.to_json()})
    return {"key": key, "sync": counts.to_json()}


def _record_setting(ds, key: str, value: Any, command: str) -> None:
    """extensions.requireApproval decides who may change the code everyone
    runs: its changes go to the extension history."""
    record_setting(ds, key, value, command)
