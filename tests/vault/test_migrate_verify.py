"""`vault migrate` removes nothing from the source unless every copy reads
back identically: a destination that stores a value wrongly (a vault type
registered in this process, run through the CLI in this process) makes the
migration stop, with the copies taken back and the source unchanged."""

from __future__ import annotations

import pytest

from swamp.errors import NotFoundError
from swamp.vault import registry
from swamp.vault.types import VaultType
from tests.helpers import init_repo, invoke

_STORES: dict[str, dict] = {}


class LossyVault:
    """Keeps values in memory, and loses the last character of long ones."""

    def __init__(self, name):
        self.name = name
        self.values = _STORES.setdefault(name, {})
        self.meta: dict = {}

    def create(self): pass
    def check(self): pass
    def location(self): return "memory"

    def put(self, key, value):
        existed = key in self.values
        self.values[key] = value[:-1] if len(value) > 12 else value
        return existed

    def get(self, key):
        if key not in self.values:
            raise NotFoundError(f"no secret {key!r}")
        return self.values[key]

    def exists(self, key): return key in self.values
    def list_keys(self): return sorted(self.values)
    def delete(self, key): self.values.pop(key)
    def read_meta(self, key): return self.meta.get(key, {})
    def write_meta(self, key, meta): self.meta[key] = meta


class LossyType(VaultType):
    name = "lossy"
    description = "loses a character (for tests)"

    def open(self, name, settings, secrets_dir):
        return LossyVault(name)


@pytest.fixture
def repo(tmp_path):
    registry.register(LossyType(), "test")
    _STORES.clear()
    r = init_repo(tmp_path / "repo")
    assert invoke(r, "vault", "create", "local_encryption", "src").code == 0
    assert invoke(r, "vault", "create", "lossy", "dst").code == 0
    assert invoke(r, "vault", "put", "src", "a.short", input="short-1").code == 0
    assert invoke(r, "vault", "put", "src", "b.long", input="a-much-longer-secret").code == 0
    yield r
    registry.unregister("lossy")


def test_a_copy_that_does_not_read_back_identically_stops_the_migration(repo):
    res = invoke(repo, "vault", "migrate", "src", "dst")
    assert res.code == 1, res
    assert res.error["code"] == "vault_migrate"
    assert "verifying" in res.error["error"] and "does not read back identically" in res.error["error"]
    assert "a-much-longer-secret" not in res.stdout + res.stderr
    assert _STORES["dst"] == {}  # the copies were taken back
    got = {k: invoke(repo, "vault", "get", "src", k).data["value"] for k in ("a.short", "b.long")}
    assert got == {"a.short": "short-1", "b.long": "a-much-longer-secret"}
    # the key that does survive the trip moves
    assert invoke(repo, "vault", "migrate", "src", "dst", "--keys", "a.short").data["removedFromSource"] == ["a.short"]
    assert _STORES["dst"] == {"a.short": "short-1"}
