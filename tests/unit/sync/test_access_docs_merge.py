"""The access documents (repo/access_docs.py) on a shared datastore: two
stale peers minting different tokens, revoking one while the other adds a
group member, both keep their change; the same token changed differently
on both is a conflict naming it, never a silent loss."""

from __future__ import annotations

import json

import pytest

from swamp.datastore.sync.rules import PathClass
from swamp.errors import ConflictError
from swamp.repo.access_docs import PATHS
from swamp.repo.datastores import path_rules

from .conftest import read, write

TOKENS, GROUPS = PATHS["tokens"], PATHS["groups"]


def _doc(e, rel) -> dict:
    return json.loads(read(e, rel))


def test_every_access_document_is_mergeable():
    rules = path_rules()
    assert all(rules.classify(p) is PathClass.MERGEABLE for p in PATHS.values())


def test_stale_peers_minting_revoking_and_adding_members_lose_nothing(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, TOKENS, json.dumps({"tokens": {"ci": {"sha256": "1" * 64, "createdAt": "t0"}}}))
    write(a, GROUPS, json.dumps({"groups": {"ops": {"members": {"user:zoe": True}}}}))
    a.push()
    b.pull()
    # from the same base: a revokes ci and mints bot; b mints web and adds a member
    write(a, TOKENS, json.dumps({"tokens": {"ci": {"createdAt": "t0", "revoked": True},
                                            "bot": {"sha256": "2" * 64, "createdAt": "t1"}}}))
    write(a, GROUPS, json.dumps({"groups": {"ops": {"members": {"user:zoe": True, "user:amy": True}}}}))
    write(b, TOKENS, json.dumps({"tokens": {"ci": {"sha256": "1" * 64, "createdAt": "t0"},
                                            "web": {"sha256": "3" * 64, "createdAt": "t2"}}}))
    write(b, GROUPS, json.dumps({"groups": {"ops": {"members": {"user:zoe": True, "token:web": True}}}}))
    a.push("access token revoke ci")
    counts = b.push("access token mint web")  # loses the race, merges
    assert counts.conflicts == []
    a.pull()
    tokens = _doc(a, TOKENS)["tokens"]
    assert sorted(tokens) == ["bot", "ci", "web"] and tokens["ci"].get("revoked") is True  # the revoke holds
    assert "sha256" not in tokens["ci"]
    assert sorted(_doc(a, GROUPS)["groups"]["ops"]["members"]) == ["token:web", "user:amy", "user:zoe"]
    assert _doc(a, TOKENS) == _doc(b, TOKENS)


def test_the_same_token_changed_on_both_is_a_conflict_that_names_it(make_peer):
    a, b = make_peer("a"), make_peer("b")
    write(a, TOKENS, json.dumps({"tokens": {}}))
    a.push()
    b.pull()
    write(a, TOKENS, json.dumps({"tokens": {"ci": {"sha256": "1" * 64, "createdAt": "t1"}}}))
    write(b, TOKENS, json.dumps({"tokens": {"ci": {"sha256": "2" * 64, "createdAt": "t2"}}}))
    a.push()
    with pytest.raises(ConflictError) as raised:
        b.push()
    assert "tokens.ci" in str(raised.value)
    (conflict,) = raised.value.counts.conflicts
    assert json.loads(read(b, conflict["savedAs"]))["tokens"]["ci"]["sha256"] == "2" * 64  # ours kept aside
