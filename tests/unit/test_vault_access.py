"""vault/access.py: the check a run's starter sets is asked wherever a
secret is taken out of or put into a vault, before anything is read, in
the run's own thread and in the threads the engine starts for its steps
(tracing.carry), and by the dispatching side of a placed step
(workflows/placement.secrets_for). No check set: nothing is asked."""

from __future__ import annotations

import threading

import pytest

from swamp.errors import SwampError
from swamp.repo.context import Repo
from swamp.repo.init import init_repo
from swamp.util import tracing
from swamp.vault import access, audit, redact, service
from swamp.vault.sentinel import make_sentinel

SECRET = "access-checked-secret-42"


@pytest.fixture
def repo(tmp_path):
    init_repo(tmp_path)
    r = Repo(tmp_path)
    service.create_vault(r, "local_encryption", "prod")
    service.put_secret(r, "prod", "api.token", SECRET)
    service.create_vault(r, "local_encryption", "dev")
    service.put_secret(r, "dev", "api.token", "dev-value")
    yield r
    redact.clear()


class Refusal(SwampError):
    code = "forbidden"


def only(*readable: str):
    """A check allowing read on the named vaults, and noting every question."""
    asked: list[tuple[str, str]] = []

    def check(action: str, vault: str) -> None:
        asked.append((action, vault))
        if not (action == "read" and vault in readable):
            raise Refusal(f"{action} on vault:{vault} is not allowed")

    return check, asked


def reads(repo, vault: str) -> int:
    return sum(1 for e in audit.read(repo.secrets_dir, vault)[0] if e["op"] == "read")


def test_without_a_check_nothing_is_asked(repo):
    assert service.RepoVaults(repo).get("prod", "api.token") == SECRET


def test_a_refused_vault_is_not_read_and_an_allowed_one_is(repo):
    check, asked = only("dev")
    before = reads(repo, "prod")
    with access.acting_for(check):
        vaults = service.RepoVaults(repo)
        with pytest.raises(Refusal):
            vaults.exists("prod", "api.token")  # evaluating vault.get()
        with pytest.raises(Refusal):
            vaults.get("prod", "api.token")  # resolving it when the method runs
        with pytest.raises(Refusal):
            service.put_secret(repo, "dev", "other", "x")  # a sensitive output stored there: write
        assert vaults.get("dev", "api.token") == "dev-value"
    assert reads(repo, "prod") == before
    assert ("read", "prod") in asked and ("write", "dev") in asked
    assert service.RepoVaults(repo).get("prod", "api.token") == SECRET  # the block is over


def test_the_check_follows_the_engines_step_threads(repo):
    check, _ = only()
    got: dict = {}

    def step() -> None:
        try:
            service.RepoVaults(repo).get("prod", "api.token")
            got["value"] = "read"
        except Refusal as e:
            got["refused"] = e.message

    with access.acting_for(check):
        t = threading.Thread(target=tracing.carry(step))
    t.start()
    t.join()
    assert got == {"refused": "read on vault:prod is not allowed"}


def test_a_placed_steps_secrets_are_asked_for_before_they_are_sent(repo):
    from swamp.workflows.placement import secrets_for

    class Args:
        def model_dump(self):
            return {"env": {"TOKEN": make_sentinel("prod", "api.token"), "OTHER": make_sentinel("dev", "api.token")}}

    class Prepared:
        args = Args()

    check, _ = only("dev")
    with access.acting_for(check):
        with pytest.raises(Refusal):
            secrets_for(repo, Prepared())
    with access.acting_for(only("dev", "prod")[0]):
        assert secrets_for(repo, Prepared()) == {("prod", "api.token"): SECRET, ("dev", "api.token"): "dev-value"}
