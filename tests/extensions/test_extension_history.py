"""Extension changes a team can review (issue 23, item 7): every change of
the lockfile is recorded (who, when, what, from which index), and with
``extensions.requireApproval`` a new pin or a change of one waits for a
second identity; until then everyone keeps running the approved pin.
Identities are the local user (USER), as runs record them."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.extensions.wheels import make_wheel
from tests.helpers import cli, init_repo, ok



def as_user(name: str) -> dict:
    """The environment of a command run by ``name`` (every variable a login
    name is read from, so however "who am I" reads it)."""
    return {"USER": name, "LOGNAME": name, "USERNAME": name, "LNAME": name}


ALICE, BOB, CAROL = (as_user(u) for u in ("alice", "bob", "carol"))


def _greeting(repo) -> str:
    """Which version of the extension ran: its method writes its version."""
    ok(repo, "model", "method", "run", "m", "hello")
    return ok(repo, "data", "get", "m", "out")["content"]["greeting"]


def _pinned(repo, name) -> str | None:
    doc = json.loads((repo / "extensions" / "lockfile.json").read_text())
    entry = doc["extensions"].get(name)
    return entry["version"] if entry else None


def _team(tmp_path, pypi, name):
    make_wheel(pypi.packages, name, "1.0", types=(f"{name}/t",))
    repo = init_repo(tmp_path / "repo")
    ok(repo, "extension", "pull", name, "--index", pypi.url, env=ALICE)
    ok(repo, "model", "create", f"{name}/t", "m")
    return repo


def test_every_lockfile_change_is_recorded_with_who_when_what_and_where_from(tmp_path, pypi):
    repo = _team(tmp_path, pypi, "hist-one")
    ok(repo, "extension", "trust", "add", pypi.url, env=ALICE)
    make_wheel(pypi.packages, "hist-one", "2.0", types=("hist-one/t",))
    ok(repo, "extension", "update", env=BOB)
    ok(repo, "extension", "rm", "hist-one", env=CAROL)

    doc = ok(repo, "extension", "history")
    assert doc["order"] == "oldest first" and doc["pending"] == [] and doc["requireApproval"] is False
    rows = [(c["action"], c["by"].split("@")[0], c.get("name") or c.get("index")) for c in doc["changes"]]
    assert rows == [("pin", "alice", "hist-one"), ("trust-add", "alice", pypi.url),
                    ("update", "bob", "hist-one"), ("remove", "carol", "hist-one")]
    update = doc["changes"][2]
    assert (update["from"]["version"], update["to"]["version"]) == ("1.0", "2.0")
    assert update["to"]["index"] == pypi.url
    wheel = pypi.packages / "hist_one-2.0-py3-none-any.whl"
    from swamp.extensions.index import sha256_of

    assert update["to"]["sha256"] == sha256_of(wheel)
    assert [c["at"] for c in doc["changes"]] == sorted(c["at"] for c in doc["changes"])
    assert [c["action"] for c in ok(repo, "extension", "history", "hist-one")["changes"]] == \
        ["pin", "update", "remove"]
    # one object per change, written once, beside the datastore's other records
    assert len(list((repo / ".swamp" / "extensions" / "history").glob("*.json"))) == 4

    text = cli(repo, "extension", "history", json=False)
    assert text.code == 0 and "bob" in text.stdout and "1.0" in text.stdout and "2.0" in text.stdout


def test_an_update_waits_for_a_second_identity_and_everyone_keeps_the_approved_pin(tmp_path, pypi):
    repo = _team(tmp_path, pypi, "hist-two")
    ok(repo, "config", "set", "extensions.requireApproval", "true")
    make_wheel(pypi.packages, "hist-two", "2.0", types=("hist-two/t",))

    r = ok(repo, "extension", "update", env=ALICE)
    assert r["updated"] == [] and [p["to"] for p in r["proposed"]] == ["2.0"]
    again = ok(repo, "extension", "update", env=ALICE)  # the same proposal, not a second one
    assert [p["proposal"] for p in again["proposed"]] == [p["proposal"] for p in r["proposed"]]
    assert _pinned(repo, "hist-two") == "1.0"
    assert _greeting(repo) == "hello from hist-two 1.0"
    # a machine installing on first use installs the approved pin, not the proposal
    shutil.rmtree(repo / ".swamp" / "cache" / "extensions")
    assert _greeting(repo) == "hello from hist-two 1.0"
    pending = ok(repo, "extension", "history", "hist-two")["pending"]
    assert [(p["by"].split("@")[0], p["to"]["version"], p["proposes"]) for p in pending] == [("alice", "2.0", "update")]

    mine = cli(repo, "extension", "approve", "hist-two", env=ALICE)
    assert mine.code == 1 and mine.error["code"] == "approval_refused", mine
    assert "second identity" in mine.error["error"]
    assert _pinned(repo, "hist-two") == "1.0"

    r = ok(repo, "extension", "approve", "hist-two", env=BOB)
    assert (r["from"], r["to"], r["proposedBy"].split("@")[0]) == ("1.0", "2.0", "alice")
    assert _pinned(repo, "hist-two") == "2.0"
    assert _greeting(repo) == "hello from hist-two 2.0"
    assert cli(repo, "extension", "approve", "hist-two", env=CAROL).error["code"] == "not_found"
    actions = [(c["action"], c["by"].split("@")[0]) for c in ok(repo, "extension", "history", "hist-two")["changes"]]
    assert actions == [("pin", "alice"), ("propose", "alice"), ("approve", "bob")]


def test_a_new_pin_waits_too_and_a_rejected_one_is_never_pinned(tmp_path, pypi):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "config", "set", "extensions.requireApproval", "true")
    make_wheel(pypi.packages, "hist-three", "1.0", types=("hist-three/t",))
    r = ok(repo, "extension", "pull", "hist-three", "--index", pypi.url, env=ALICE)
    assert r["changed"] is False and r["proposed"]["proposes"] == "pin"
    assert not (repo / "extensions" / "lockfile.json").exists() or _pinned(repo, "hist-three") is None
    unknown = cli(repo, "model", "create", "hist-three/t", "m")
    assert unknown.code != 0 and unknown.error["code"] == "not_found", unknown

    ok(repo, "extension", "reject", "hist-three", env=BOB)
    assert ok(repo, "extension", "history")["pending"] == []
    assert cli(repo, "extension", "approve", "hist-three", env=CAROL).error["code"] == "not_found"


def test_someone_swamp_cannot_name_cannot_approve(tmp_path, pypi):
    repo = _team(tmp_path, pypi, "hist-four")
    ok(repo, "config", "set", "extensions.requireApproval", "true")
    make_wheel(pypi.packages, "hist-four", "2.0", types=("hist-four/t",))
    ok(repo, "extension", "update", env=ALICE)
    r = cli(repo, "extension", "approve", "hist-four", env=as_user("unknown"))
    assert r.code == 1 and r.error["code"] == "approval_refused", r
    assert _pinned(repo, "hist-four") == "1.0"


@pytest.mark.slow
@pytest.mark.s3
def test_peers_on_a_shared_datastore_install_only_the_approved_pin(tmp_path, pypi, seaweedfs):
    args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
            "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1"]
    a, b = (init_repo(tmp_path / n) for n in "ab")
    for repo in (a, b):
        ok(repo, "datastore", "setup", *args)
    make_wheel(pypi.packages, "hist-peer", "1.0", types=("hist-peer/t",))
    ok(a, "extension", "pull", "hist-peer", "--index", pypi.url, env=ALICE)
    ok(a, "config", "set", "extensions.requireApproval", "true")
    make_wheel(pypi.packages, "hist-peer", "2.0", types=("hist-peer/t",))
    ok(a, "extension", "update", env=ALICE)

    ok(b, "datastore", "sync")
    ok(b, "model", "create", "hist-peer/t", "m")
    assert _greeting(b) == "hello from hist-peer 1.0"  # b installs the approved pin
    assert [p["by"].split("@")[0] for p in ok(b, "extension", "history")["pending"]] == ["alice"]
    ok(b, "extension", "approve", "hist-peer", env=BOB)

    ok(a, "datastore", "sync")
    assert [e["version"] for e in ok(a, "extension", "list")["extensions"]] == ["2.0"]
    seen = [[(c["action"], c["by"].split("@")[0]) for c in ok(r, "extension", "history", "hist-peer")["changes"]]
            for r in (a, b)]
    assert seen[0] == seen[1] == [("pin", "alice"), ("propose", "alice"), ("approve", "bob")]


def test_turning_approval_off_is_recorded_too(tmp_path):
    repo = init_repo(tmp_path / "repo")
    ok(repo, "config", "set", "extensions.requireApproval", "true", env=ALICE)
    ok(repo, "config", "set", "unrelated.setting", "1", env=ALICE)  # not the history's business
    ok(repo, "config", "unset", "extensions.requireApproval", env=BOB)
    doc = ok(repo, "extension", "history")
    rows = [(c["action"], c["by"].split("@")[0], c["setting"], c.get("value")) for c in doc["changes"]]
    assert rows == [("setting", "alice", "extensions.requireApproval", True),
                    ("setting", "bob", "extensions.requireApproval", None)]
    assert doc["requireApproval"] is False


def test_pinning_the_same_version_with_other_bytes_is_recorded_as_a_repin(tmp_path, pypi):
    """The wheel changed on the index under the same version and someone pinned
    it again anyway: not silent, the history says so with both digests."""
    repo = _team(tmp_path, pypi, "hist-five")
    make_wheel(tmp_path, "hist-five", "1.0", types=("hist-five/t", "hist-five/u"))  # other bytes, same file name
    wheel = "hist_five-1.0-py3-none-any.whl"
    (tmp_path / wheel).replace(pypi.packages / wheel)
    ok(repo, "extension", "pull", "hist-five==1.0", env=BOB)
    last = ok(repo, "extension", "history", "hist-five")["changes"][-1]
    assert (last["action"], last["by"].split("@")[0]) == ("repin", "bob")
    assert last["from"]["version"] == last["to"]["version"] == "1.0"
    assert last["from"]["sha256"] != last["to"]["sha256"]


def test_an_approval_settles_its_proposal_whatever_the_approvers_clock_says():
    """Records sort by their own clocks; an approval names the proposal it
    settles, so a peer whose clock is behind cannot leave it pending."""
    from swamp.extensions.history import Change, pending

    def change(id_, at, action, **kw):
        return Change(id=id_, at=at, by="x@h", action=action, name="e", **kw)

    proposal = change("p1", "2026-12-01T10:00:00.000Z", "propose")
    behind = change("a1", "2026-12-01T09:59:00.000Z", "approve", proposal="p1")
    assert pending(sorted([proposal, behind], key=lambda c: (c.at, c.id))) == {}
    newer = change("p2", "2026-12-01T10:05:00.000Z", "propose")
    assert pending([proposal, newer])["e"].id == "p2"  # a later proposal replaces an earlier one
    assert pending([proposal, change("r1", "2026-12-01T10:01:00.000Z", "remove")]) == {}
