"""Vaults of a repository: configs in git, secrets local, the expression
provider."""

import os

import pytest

from swamp.errors import ExpressionError, NotFoundError, SwampError, ValidationError
from swamp.expr import ExprContext, register_namespace, render
from swamp.repo.context import Repo
from swamp.repo.init import init_repo
from swamp.vault import expressions, redact, service
from swamp.vault.sentinel import resolve_sentinels

SECRET = "correct-horse-battery-staple"
register_namespace(expressions.NAMESPACE)


@pytest.fixture
def repo(tmp_path):
    init_repo(tmp_path)
    return Repo(tmp_path)


@pytest.fixture(autouse=True)
def clean_redactor():
    redact.clear()
    yield
    redact.clear()


def all_files(root):
    for d, _dirs, files in os.walk(root):
        for f in files:
            yield os.path.join(d, f)


def test_create_writes_config_without_secret_material(repo):
    result = service.create_vault(repo, "local_encryption", "prod")
    assert result["path"] == "vaults/local_encryption/prod.yaml"
    text = (repo.root / result["path"]).read_text()
    assert "name: prod" in text and "type: local_encryption" in text
    key = (repo.secrets_dir / "local_encryption" / "prod" / ".key").read_bytes()
    assert key not in (repo.root / result["path"]).read_bytes()
    assert service.list_vaults(repo) == [{**{k: result[k] for k in ("name", "type", "createdAt")},
                                         "path": result["path"]}]


def test_create_refuses_duplicates_and_unknown_types(repo):
    service.create_vault(repo, "local_encryption", "prod")
    with pytest.raises(SwampError, match="already exists"):
        service.create_vault(repo, "local_encryption", "prod")
    with pytest.raises(ValidationError, match="unknown vault type"):
        service.create_vault(repo, "1password", "other")


def test_round_trip_and_no_plaintext_anywhere(repo):
    service.create_vault(repo, "local_encryption", "prod")
    assert service.put_secret(repo, "prod", "DB_PASS", SECRET) == {
        "vault": "prod", "key": "DB_PASS", "overwritten": False}
    assert service.get_secret(repo, "prod", "DB_PASS") == SECRET
    assert service.list_keys(repo, "prod") == ["DB_PASS"]
    for path in all_files(repo.root):
        with open(path, "rb") as f:
            assert SECRET.encode() not in f.read(), path
    service.delete_secret(repo, "prod", "DB_PASS")
    assert service.list_keys(repo, "prod") == []


def test_audit_log_names_operations_never_values(repo):
    service.create_vault(repo, "local_encryption", "prod")
    service.put_secret(repo, "prod", "k", SECRET)
    service.delete_secret(repo, "prod", "k")
    log = (repo.secrets_dir / "audit.jsonl").read_text()
    assert [line.split('"op": "')[1].split('"')[0] for line in log.splitlines()] == ["create", "put", "delete"]
    assert SECRET not in log


def test_unknown_vault_gets_a_hint(repo):
    service.create_vault(repo, "local_encryption", "production")
    with pytest.raises(NotFoundError) as info:
        service.get_secret(repo, "productio", "k")
    assert "production" in info.value.hint


def test_empty_value_is_refused(repo):
    service.create_vault(repo, "local_encryption", "prod")
    with pytest.raises(ValidationError):
        service.put_secret(repo, "prod", "k", "")


def test_traversal_refused_before_anything_is_written(repo):
    before = sorted(all_files(repo.root))
    for vault, key in [("../evil", "k"), ("prod/../../x", "k"), ("prod", "../../x"), ("prod", "a/b")]:
        with pytest.raises(ValidationError):
            service.put_secret(repo, vault, key, SECRET)
    with pytest.raises(ValidationError):
        service.create_vault(repo, "local_encryption", "../evil")
    assert sorted(all_files(repo.root)) == before


def test_provider_feeds_expressions_and_registers_secrets(repo):
    service.create_vault(repo, "local_encryption", "prod")
    service.put_secret(repo, "prod", "token", SECRET)
    vaults = service.RepoVaults(repo)
    args = render({"auth": "Bearer ${{ vault.get('prod', 'token') }}"}, ExprContext(providers={"vault": vaults}))
    assert SECRET not in repr(args)
    assert redact.redact_text(SECRET) == SECRET  # evaluating registered nothing
    resolved = resolve_sentinels(args, vaults.get)
    assert resolved == {"auth": f"Bearer {SECRET}"}
    assert redact.redact_text(resolved["auth"]) == "Bearer ***"


def test_provider_errors_surface_in_expressions(repo):
    service.create_vault(repo, "local_encryption", "prod")
    ctx = ExprContext(providers={"vault": service.RepoVaults(repo)})
    with pytest.raises(ExpressionError, match="has no secret 'nope'"):
        render("${{ vault.get('prod', 'nope') }}", ctx)
    with pytest.raises(ExpressionError, match="no vault named 'other'"):
        render("${{ vault.get('other', 'k') }}", ctx)
