"""`swamp vault ...`: the contract in CLI.md, JSON fields, errors, and no
secret on disk outside its ciphertext."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import cli, init_repo, invoke, snapshot

SECRET = "pa55-w0rd-from-stdin"


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    assert invoke(r, "vault", "create", "local_encryption", "prod").code == 0
    return r


def files_containing(root, needle: bytes) -> list[str]:
    hits = []
    for d, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                if needle in fh.read():
                    hits.append(os.path.relpath(p, root))
    return hits


def test_create(tmp_path):
    r = init_repo(tmp_path / "r")
    res = invoke(r, "vault", "create", "local_encryption", "team-secrets")
    assert res.code == 0, res
    assert res.data["name"] == "team-secrets" and res.data["type"] == "local_encryption"
    assert res.data["path"] == "vaults/local_encryption/team-secrets.yaml"
    assert "createdAt" in res.data
    assert (r / ".swamp/secrets/local_encryption/team-secrets/.key").is_file()
    listed = invoke(r, "vault", "list").data
    assert [v["name"] for v in listed] == ["team-secrets"]


def test_create_twice_and_unknown_type(repo):
    res = invoke(repo, "vault", "create", "local_encryption", "prod")
    assert res.code == 1 and res.error["code"] == "exists"
    res = invoke(repo, "vault", "create", "hashicorp", "x")
    assert res.code == 1 and res.error["code"] == "validation"


def test_put_from_stdin_strips_one_newline_and_get_prints_it(repo):
    res = invoke(repo, "vault", "put", "prod", "DB_PASS", input=SECRET + "\n")
    assert res.code == 0, res
    assert res.data == {"vault": "prod", "key": "DB_PASS", "overwritten": False}
    assert SECRET not in res.stdout + res.stderr
    got = invoke(repo, "vault", "get", "prod", "DB_PASS")
    assert got.data == {"vault": "prod", "key": "DB_PASS", "value": SECRET}
    plain = invoke(repo, "vault", "get", "prod", "DB_PASS", json=False)
    assert plain.stdout == SECRET + "\n"


def test_only_one_trailing_newline_is_stripped(repo):
    invoke(repo, "vault", "put", "prod", "k", input="line1\nline2\n\n")
    assert invoke(repo, "vault", "get", "prod", "k").data["value"] == "line1\nline2\n"


def test_put_value_argument_and_overwrite(repo):
    assert invoke(repo, "vault", "put", "prod", "api.token", "first-value").data["overwritten"] is False
    assert invoke(repo, "vault", "put", "prod", "api.token", "second-value").data["overwritten"] is True
    assert invoke(repo, "vault", "get", "prod", "api.token").data["value"] == "second-value"


def test_empty_stdin_is_refused(repo):
    res = invoke(repo, "vault", "put", "prod", "k", input="")
    assert res.code == 1 and res.error["code"] == "validation"


def test_list_keys_sorted_without_values(repo):
    for key in ["zeta", "Alpha", "mid.dle"]:
        invoke(repo, "vault", "put", "prod", key, f"value-of-{key}")
    res = invoke(repo, "vault", "list-keys", "prod")
    assert res.data == {"vault": "prod", "keys": ["Alpha", "mid.dle", "zeta"]}
    assert "value-of" not in res.stdout
    assert invoke(repo, "vault", "list-keys", "prod", json=False).stdout == "Alpha\nmid.dle\nzeta\n"


def test_delete_needs_yes_without_a_terminal(repo):
    invoke(repo, "vault", "put", "prod", "k", "value-1")
    res = invoke(repo, "vault", "delete", "prod", "k")
    assert res.code == 2 and res.error["code"] == "usage"
    assert invoke(repo, "vault", "list-keys", "prod").data["keys"] == ["k"]
    res = invoke(repo, "vault", "delete", "prod", "k", "-y")
    assert res.data == {"vault": "prod", "key": "k", "deleted": True}
    assert invoke(repo, "vault", "list-keys", "prod").data["keys"] == []
    res = invoke(repo, "vault", "delete", "prod", "k", "-y")
    assert res.code == 1 and res.error["code"] == "not_found"


def test_missing_vault_and_key(repo):
    res = invoke(repo, "vault", "get", "prod", "nope")
    assert res.code == 1 and res.error["code"] == "not_found" and "vault put prod nope" in res.error["hint"]
    res = invoke(repo, "vault", "list-keys", "prd")
    assert res.code == 1 and res.error["code"] == "not_found" and "prod" in res.error["hint"]


@pytest.mark.parametrize("vault, key", [("../../etc", "k"), ("prod", "../../../x"), ("prod", "a/b"),
                                        ("Prod", "k"), ("prod", "..")])
def test_traversal_refused_before_anything_is_written(repo, vault, key):
    before = snapshot(repo)
    res = invoke(repo, "vault", "put", vault, key, "value-x")
    assert res.code == 1 and res.error["code"] == "validation"
    res = invoke(repo, "vault", "put", vault, key, input="value-y\n")
    assert res.code == 1 and res.error["code"] == "validation"
    assert snapshot(repo) == before


def test_no_secret_in_any_file_but_its_ciphertext(repo):
    assert cli(repo, "vault", "put", "prod", "DB_PASS", input=SECRET + "\n").code == 0
    invoke(repo, "vault", "list-keys", "prod")
    assert files_containing(repo, SECRET.encode()) == []
    enc = repo / ".swamp/secrets/local_encryption/prod/DB_PASS.enc"
    assert enc.is_file()


def test_subprocess_round_trip_and_exit_codes(repo):
    put = cli(repo, "vault", "put", "prod", "tok", input="abc-123\n")
    assert put.code == 0, put
    got = cli(repo, "vault", "get", "prod", "tok", json=False)
    assert (got.code, got.stdout) == (0, "abc-123\n")
    bad = cli(repo, "vault", "get", "prod", "missing")
    assert bad.code == 1 and bad.error["code"] == "not_found"


def test_cli_and_expression_api_do_not_load_heavy_modules():
    code = ("import sys, swamp.cli.main, swamp.cli.vault, swamp.expr, swamp.vault.sentinel; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cel_expr_python', 'cryptography')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
