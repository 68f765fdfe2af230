"""The one spelling of an actor (swamp.util.actors) and the local account
behind it: never "unknown", whatever the environment leaves out."""

from __future__ import annotations

import os
import pwd

from swamp.util import actors, ids


def test_the_os_account_stands_in_when_user_and_logname_are_unset(monkeypatch):
    for var in ("USER", "LOGNAME", "USERNAME"):
        monkeypatch.delenv(var, raising=False)
    account = pwd.getpwuid(os.getuid()).pw_name
    assert ids.os_user() == account
    assert actors.local_user() == f"user:{account}@{ids.hostname()}"
    assert ids.holder() == f"{account}@{ids.hostname()}"  # lock holders are named the same way


def test_a_uid_with_no_account_is_named_by_its_number(monkeypatch):
    for var in ("USER", "LOGNAME", "USERNAME"):
        monkeypatch.delenv(var, raising=False)

    def missing(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", missing)
    assert ids.os_user() == f"uid{os.getuid()}"


def test_logname_counts_when_user_is_unset(monkeypatch):
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.setenv("LOGNAME", "carol")
    assert actors.local_user() == f"user:carol@{ids.hostname()}"


def test_a_server_caller_is_its_token_with_the_user_it_was_minted_for():
    assert actors.of_subjects(["token:ci", "user:alice", "group:ops"]) == "token:ci (user:alice)"
    assert actors.of_subjects(["token:bot", "group:ops"]) == "token:bot"
    assert actors.of_subjects(["anonymous"]) == "anonymous"
    assert actors.of_subjects([]) == "anonymous"
    assert actors.of_subjects(["webhook:gh"]) == actors.webhook("gh") == "webhook:gh"
    assert actors.schedule("nightly") == "schedule:nightly"


def test_an_actor_cannot_pass_for_another_kind_nor_carry_control_characters(monkeypatch):
    monkeypatch.setenv("USER", "token:ci")
    assert actors.local_user() == f"user:token:ci@{ids.hostname()}"  # still a local user
    monkeypatch.setenv("USER", "eve\x1b[2K\rroot")
    assert actors.local_user() == f"user:eve?[2K?root@{ids.hostname()}"
    assert actors.of_subjects(["token:ci", "user:al\nice"]) == "token:ci (user:al?ice)"
