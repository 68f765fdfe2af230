"""The local_encryption vault: format, binding to names, file modes."""

import os
import stat

import pytest

from swamp.errors import ConflictError, NotFoundError, ValidationError, VaultError
from swamp.vault.local import FORMAT_VERSION, LocalEncryptionVault


@pytest.fixture
def vault(tmp_path):
    v = LocalEncryptionVault("prod", tmp_path / "secrets")
    v.create()
    return v


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_round_trip(vault):
    assert vault.put("DB_PASS", "hunter2 ünïcode") is False
    assert vault.get("DB_PASS") == "hunter2 ünïcode"
    assert vault.put("DB_PASS", "new") is True
    assert vault.get("DB_PASS") == "new"
    assert vault.exists("DB_PASS") and not vault.exists("other")


def test_layout_and_modes(vault, tmp_path):
    vault.put("api.token", "value-123")
    d = tmp_path / "secrets" / "local_encryption" / "prod"
    assert sorted(os.listdir(d)) == [".key", "api.token.enc"]
    assert len((d / ".key").read_bytes()) == 32
    assert mode(d / ".key") == 0o600
    assert mode(d / "api.token.enc") == 0o600
    assert mode(d) == 0o700
    blob = (d / "api.token.enc").read_bytes()
    assert blob[0] == FORMAT_VERSION
    assert len(blob) == 1 + 12 + len("value-123") + 16
    assert b"value-123" not in blob


def test_create_keeps_an_existing_key(vault):
    vault.put("k", "v1")
    key = vault.key_path.read_bytes()
    vault.create()
    assert vault.key_path.read_bytes() == key
    assert vault.get("k") == "v1"


def test_each_put_uses_a_fresh_nonce(vault):
    vault.put("a", "same")
    first = (vault.dir / "a.enc").read_bytes()
    vault.put("a", "same")
    assert (vault.dir / "a.enc").read_bytes() != first


def test_ciphertext_moved_to_another_name_is_refused(vault):
    vault.put("a", "secret-a")
    (vault.dir / "b.enc").write_bytes((vault.dir / "a.enc").read_bytes())
    with pytest.raises(VaultError, match="does not decrypt"):
        vault.get("b")


def test_ciphertext_moved_to_another_vault_is_refused(vault, tmp_path):
    vault.put("a", "secret-a")
    other = LocalEncryptionVault("staging", tmp_path / "secrets")
    other.create()
    # Same key too, so only the vault name in the AAD differs.
    other.key_path.write_bytes(vault.key_path.read_bytes())
    (other.dir / "a.enc").write_bytes((vault.dir / "a.enc").read_bytes())
    with pytest.raises(VaultError, match="does not decrypt"):
        other.get("a")


def test_tampered_ciphertext_is_refused(vault):
    vault.put("a", "secret-a")
    p = vault.dir / "a.enc"
    blob = bytearray(p.read_bytes())
    blob[-1] ^= 1
    p.write_bytes(bytes(blob))
    with pytest.raises(VaultError):
        vault.get("a")


def test_unknown_format_version(vault):
    vault.put("a", "secret-a")
    p = vault.dir / "a.enc"
    p.write_bytes(b"\x09" + p.read_bytes()[1:])
    with pytest.raises(VaultError, match="format version"):
        vault.get("a")


def test_missing_key_file(vault):
    vault.put("a", "secret-a")
    vault.key_path.unlink()
    with pytest.raises(VaultError, match="no key file"):
        vault.get("a")


def test_missing_secret(vault):
    with pytest.raises(NotFoundError):
        vault.get("nope")
    with pytest.raises(NotFoundError):
        vault.delete("nope")


def test_list_and_delete(vault):
    for k in ["b", "A_KEY", "a.b"]:
        vault.put(k, "v" * 8)
    assert vault.list_keys() == ["A_KEY", "a.b", "b"]
    vault.delete("b")
    assert vault.list_keys() == ["A_KEY", "a.b"]


def test_keys_differing_only_in_case_conflict(vault):
    vault.put("Token", "v1")
    with pytest.raises(ConflictError):
        vault.put("token", "v2")


@pytest.mark.parametrize("key", ["../x", "a/b", "a\x00b", "..", ".hidden", "a..b", "", "x" * 129, "sp ace"])
def test_bad_key_names_are_refused_before_any_write(vault, key):
    before = sorted(os.listdir(vault.dir))
    with pytest.raises(ValidationError):
        vault.put(key, "value")
    with pytest.raises(ValidationError):
        vault.get(key)
    assert sorted(os.listdir(vault.dir)) == before


@pytest.mark.parametrize("name", ["../x", "a/b", "A", "", "a\x00"])
def test_bad_vault_names_are_refused(tmp_path, name):
    with pytest.raises(ValidationError):
        LocalEncryptionVault(name, tmp_path)
