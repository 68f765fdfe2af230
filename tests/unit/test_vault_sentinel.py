"""vault.get during evaluation yields a sentinel, never the secret; the
secret replaces it only when a method runs."""

import os
import subprocess

import pytest

from swamp.errors import ExpressionError, ValidationError
from swamp.expr import ExprContext, register_namespace, render
from swamp.vault import expressions, redact
from swamp.vault.sentinel import find_sentinels, make_sentinel, resolve_sentinels, to_env

register_namespace(expressions.NAMESPACE)

SECRET = "s3cr3t-It's \"$(touch /tmp/pwned)\" `id` $HOME *"


class Vault:
    def __init__(self):
        self.gets = []

    def exists(self, vault, key):
        return key != "missing"

    def get(self, vault, key):
        self.gets.append((vault, key))
        return SECRET


@pytest.fixture(autouse=True)
def clean_redactor():
    redact.clear()
    yield
    redact.clear()


def test_sentinel_survives_interpolation_and_never_holds_the_secret():
    vault = Vault()
    ctx = ExprContext(providers={"vault": vault})
    out = render({"auth": "Bearer ${{ vault.get('prod', 'API_TOKEN') }}",
                  "list": "${{ [vault.get('prod', 'db.pass')] }}",
                  "json": "x=${{ [vault.get('prod', 'db.pass')] }}"}, ctx)
    assert vault.gets == []
    assert SECRET not in repr(out)
    assert out["auth"] == "Bearer " + make_sentinel("prod", "API_TOKEN")
    assert out["list"] == [make_sentinel("prod", "db.pass")]
    assert out["json"] == f'x=["{make_sentinel("prod", "db.pass")}"]'
    assert find_sentinels(out) == [("prod", "API_TOKEN"), ("prod", "db.pass")]


def test_missing_secret_fails_during_evaluation():
    with pytest.raises(ExpressionError) as info:
        render({"a": "${{ vault.get('prod', 'missing') }}"}, ExprContext(providers={"vault": Vault()}))
    assert "has no secret 'missing'" in info.value.message
    assert info.value.hint == "swamp vault put prod missing"


def test_without_a_provider_the_sentinel_is_not_checked():
    assert render("${{ vault.get('v', 'k') }}", ExprContext()) == make_sentinel("v", "k")


@pytest.mark.parametrize("vault, key", [("../x", "k"), ("v", "../k"), ("v", "a/b"), ("v", "a\x00b"), ("V", "k")])
def test_bad_names_are_refused(vault, key):
    with pytest.raises(ValidationError):
        make_sentinel(vault, key)
    with pytest.raises(ExpressionError):
        render("${{ vault.get(%r, %r) }}" % (vault, key), ExprContext())


def test_resolve_replaces_and_registers_each_secret_once():
    vault = Vault()
    s = make_sentinel("prod", "k")
    out = resolve_sentinels({"a": [f"x {s} y", s], "n": 3}, vault.get)
    assert out == {"a": [f"x {SECRET} y", SECRET], "n": 3}
    assert vault.gets == [("prod", "k")]
    assert redact.redact_text(f"log: {SECRET}") == "log: ***"


def test_a_forged_sentinel_from_another_process_is_left_alone():
    forged = "<<swamp-vault:0000000000000000:prod:k>>"
    assert find_sentinels({"a": forged}) == []
    assert resolve_sentinels(forged, Vault().get) == forged


@pytest.mark.parametrize("template, expected", [
    ("printf '%s\\n' {s}", SECRET),
    ("printf '%s\\n' \"pre {s} post\"", f"pre {SECRET} post"),
    ("printf '%s\\n' 'pre {s} post'", f"pre {SECRET} post"),
    ("printf '%s\\n' pre{s}post", f"pre{SECRET}post"),
    ("printf '%s\\n' \\'{s}", f"'{SECRET}"),
    ("printf '%s\\n' \"a\\\"{s}\"", f'a"{SECRET}'),
])
def test_to_env_keeps_the_secret_out_of_the_command(template, expected):
    s = make_sentinel("prod", "k")
    run, env = to_env(template.replace("{s}", s), {"OTHER": f"v={s}"}, Vault().get)
    assert SECRET not in run
    assert env == {"OTHER": f"v={SECRET}", "__SWAMP_VAULT_0": SECRET}
    out = subprocess.run(["bash", "-c", run], env={**os.environ, **env}, capture_output=True, text=True)
    assert out.stdout == expected + "\n"


def test_to_env_reuses_one_variable_per_secret():
    a, b = make_sentinel("v", "a"), make_sentinel("v", "b")
    run, env = to_env(f"echo {a} {b} {a}", None, lambda v, k: f"value-of-{k}")
    assert run == 'echo "${__SWAMP_VAULT_0}" "${__SWAMP_VAULT_1}" "${__SWAMP_VAULT_0}"'
    assert env == {"__SWAMP_VAULT_0": "value-of-a", "__SWAMP_VAULT_1": "value-of-b"}
