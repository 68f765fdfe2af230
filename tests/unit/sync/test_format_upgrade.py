"""A remote set up with sync format 1 (by a swamp that does not read inline
contents) gets inline contents once upgraded (``SyncEngine.upgrade_format``):
an upgrade record in the log, which every older reader refuses as malformed
(naming the upgrade) before applying anything, then ``format.json``
rewritten, which an older swamp starting afresh refuses as too new. Peers of
this version inline once they have pulled the record."""

from __future__ import annotations

import json

import pytest

from swamp.datastore.sync.commitlog import valid_path
from swamp.datastore.sync.layout import FORMAT_VERSION
from swamp.errors import SwampError

from .conftest import files, write

FORMAT = "default/format.json"


def _format_1(store) -> None:
    store.put(FORMAT, json.dumps({"format": "swamp-sync", "version": 1, "createdAt": "2026-01-01T00:00:00Z"}).encode(),
              if_none_match=True)


def _records(store) -> list[dict]:
    return [json.loads(body) for key, (body, *_r) in sorted(store._objects.items()) if "/log/" in key]


def _blobs(store) -> list[str]:
    return [k for k in store._objects if "/blobs/" in k]


def _as_a_format_1_reader(record: dict) -> None:
    """What a swamp of format 1 checks in each entry of a record it reads,
    before applying anything: a valid path (else skipped), then the op must
    be put or delete, else the whole record is malformed."""
    for c in record["changes"]:
        if not valid_path(c.get("path")):
            continue
        if c["op"] not in ("put", "delete"):
            raise ValueError(f"commit {record['seq']} is malformed: bad op {c['op']!r}")


def test_upgrading_a_format_1_remote_turns_inline_contents_on_and_refuses_older_readers(make_peer, store):
    _format_1(store)
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/one", b"small one")
    a.push()
    b.pull()
    assert _blobs(store) and not any("data" in c for r in _records(store) for c in r["changes"])

    out = a.upgrade_format()
    assert out["from"] == 1 and out["to"] == FORMAT_VERSION and out["upgraded"] and out["seq"] == 2
    assert json.loads(store.get(FORMAT)[0])["version"] == FORMAT_VERSION
    marker = _records(store)[-1]
    assert marker["upgrade"] == FORMAT_VERSION
    with pytest.raises(ValueError, match="upgrade swamp"):
        _as_a_format_1_reader(marker)  # refused before anything is applied
    for record in _records(store)[:-1]:
        _as_a_format_1_reader(record)  # what came before stays readable to it

    blobs = set(_blobs(store))
    write(a, "files/two", b"small two")
    a.push()
    write(b, "files/three", b"small three")  # b learns of the upgrade from its pull
    b.sync()
    a.pull()
    assert set(_blobs(store)) == blobs  # both went inline
    assert [c["path"] for r in _records(store)[-2:] for c in r["changes"] if "data" in c] == \
        ["files/two", "files/three"]
    assert files(a) == files(b) == {"files/one": b"small one", "files/two": b"small two",
                                    "files/three": b"small three"}
    assert a.verify()["ok"]
    again = a.upgrade_format()
    assert (again["from"], again["to"], again["upgraded"], again["seq"]) == (FORMAT_VERSION, FORMAT_VERSION,
                                                                             False, None)


def test_an_older_swamp_starting_afresh_is_refused_as_too_new(make_peer, store, monkeypatch):
    from swamp.datastore.sync import remote_format

    _format_1(store)
    a = make_peer("a")
    write(a, "files/one", b"x")
    a.push()
    a.upgrade_format()
    monkeypatch.setattr(remote_format, "FORMAT_VERSION", 1)  # a swamp that understands format 1 only
    old = make_peer("old")
    with pytest.raises(SwampError) as err:
        old.pull()
    assert err.value.code == "format_too_new" and "upgrade swamp" in err.value.hint
    assert files(old) == {}


def test_an_interrupted_upgrade_run_again_appends_no_second_record(make_peer, store):
    _format_1(store)
    a, b = make_peer("a"), make_peer("b")
    write(a, "files/one", b"x")
    a.push()
    a.records.append_record("datastore upgrade", upgrade=FORMAT_VERSION)  # killed before format.json was rewritten
    assert json.loads(store.get(FORMAT)[0])["version"] == 1
    out = b.upgrade_format()
    assert (out["from"], out["to"], out["upgraded"], out["seq"]) == (1, FORMAT_VERSION, True, None)
    assert out["sync"]["filesPulled"] == 1  # what its pull brought is reported
    assert sum("upgrade" in r for r in _records(store)) == 1
    assert json.loads(store.get(FORMAT)[0])["version"] == FORMAT_VERSION
