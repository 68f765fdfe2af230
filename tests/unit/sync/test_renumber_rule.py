"""The renumber rule (issue 24, N1; SYNC.md "The renumber rule"): a new
version is published only under a live holding of its lease, so a number a
run allocated under the lease is final. On the memory store."""

from __future__ import annotations

import threading

import yaml

from swamp.datastore.sync.commitlog import fetch_one, list_seqs

from .conftest import files, write

V = "data/acme/counter/m1/result"
LEASE = "model/acme/counter/m1"
OUT = "outputs/acme/counter/m1/run"


def _version(e, v: int, who: str) -> None:
    """A run's version ``v`` with its metadata and output record."""
    owner = {"definitionId": "m1", "definitionName": "m", "modelType": "acme/counter", "methodName": "run",
             "outputId": f"out-{who}"}
    write(e, f"{V}/{v}/raw", f"{who}'s result".encode())
    write(e, f"{V}/{v}/metadata.yaml", yaml.safe_dump({"id": f"id-{who}", "name": "result", "version": v,
                                                       "owner": owner}).encode())
    write(e, f"{OUT}/20260101T000000000Z-out-{who}.yaml",
          yaml.safe_dump({"id": f"out-{who}", "dataArtifacts": [{"name": "result", "version": v}]}).encode())


def _commits(e) -> list:
    return [fetch_one(e.store, e.layout, seq) for seq in list_seqs(e.store, e.layout, 0)]


def test_the_lease_scheme_names_is_the_models_lease():
    from swamp.data.renumber import VERSIONS
    from swamp.models.leases import model_lock_name

    assert VERSIONS.lease(V) == model_lock_name("acme/counter", "m1") == LEASE


def test_a_sync_publishing_a_leftover_version_takes_its_lease_and_names_it(make_peer):
    a = make_peer("a")
    _version(a, 1, "a")  # written with no lease held (its run's push failed, the lease since released)
    a.sync()
    (commit,) = [c for c in _commits(a) if c.changes]
    assert LEASE in commit.leases  # published under a holding of the model's lease
    assert a.lease_status() == []  # and released


def test_a_leftover_whose_lease_is_busy_waits_with_its_record_and_the_rest_is_published(make_peer):
    a, b, c = make_peer("a"), make_peer("b"), make_peer("c")
    _version(a, 1, "a")
    write(a, "files/x", b"a command's own work")
    with b.lease(LEASE):  # another peer's run holds the model's lease
        a.push()  # a command's own push: tries the lease once, never waits
        c.pull()
        assert "files/x" in files(c)
        assert not [p for p in files(c) if p.startswith((V, OUT))]  # the version and its record wait
    a.push()
    c.pull()
    assert files(c)[f"{V}/1/raw"] == b"a's result"
    assert a.status()["dirtyFiles"] == []


def test_a_sync_waits_for_a_run_holding_the_lease_and_the_runs_number_stays_final(make_peer):
    a, b, c = make_peer("a"), make_peer("b"), make_peer("c")
    _version(a, 1, "a")  # a's leftover, unpublished
    holding, synced = threading.Event(), []

    def sync_a() -> None:
        holding.wait(10)
        synced.append(a.sync())

    t = threading.Thread(target=sync_a)
    t.start()
    with b.lease(LEASE):
        b.pull()
        _version(b, 1, "b")  # allocated under the lease: 1
        holding.set()
        t.join(0.5)  # a's sync is waiting for the lease meanwhile (without the rule it published a's 1 here)
        counts = b.push()
    t.join(30)
    assert "renumbered" not in counts.to_json()  # b's 1 stays 1: final
    assert [(r["from"], r["to"]) for r in synced[0].to_json()["renumbered"]] == [(1, 2)]
    c.pull()
    assert files(c)[f"{V}/1/raw"] == b"b's result" and files(c)[f"{V}/2/raw"] == b"a's result"
    rec = yaml.safe_load(files(c)[f"{OUT}/20260101T000000000Z-out-a.yaml"])
    assert rec["dataArtifacts"][0]["version"] == 2
