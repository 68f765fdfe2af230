"""Access administration on a checkout is the application's, not the
server's: `swamp access ...` and `swamp auth ...` answer as before and load
nothing of serve/ (the CLI imports only app/, errors and util; the one
module of serve it may load is serve/process.py, for `swamp serve`)."""

from __future__ import annotations

import textwrap

from tests.helpers import cli, init_repo

GRANTS = """
grants:
  - subjects: ["group:ops"]
    actions: [run]
    resources: ["model:*"]
  - subjects: ["user:intern"]
    effect: deny
    actions: [run]
    resources: ["model:*"]
"""


def _checkout(tmp_path):
    repo = init_repo(tmp_path / "repo")
    (repo / "grants").mkdir()
    (repo / "grants" / "team.yaml").write_text(textwrap.dedent(GRANTS).lstrip())
    assert cli(repo, "access", "group", "create", "ops").code == 0
    assert cli(repo, "access", "group", "add-member", "ops", "user:alice").code == 0
    return repo


def test_can_i_says_which_grant_decided_in_words(tmp_path):
    repo = _checkout(tmp_path)
    yes = cli(repo, "access", "can-i", "run", "model:hello", "--subject", "user:alice", json=False)
    assert yes.code == 0 and yes.stdout.strip() == "yes: allow in grants/team.yaml"
    no = cli(repo, "access", "can-i", "run", "model:hello", "--subject", "user:intern", json=False)
    assert no.code == 1 and no.stdout.strip() == "no: deny in grants/team.yaml"
    none = cli(repo, "access", "can-i", "write", "data:hello/x", "--subject", "user:alice", json=False)
    assert none.code == 1
    assert none.stdout.strip() == "no: no grant allows write on data:hello/x for user:alice, group:ops"
    nobody = cli(repo, "access", "can-i", "run", "model:hello")
    assert nobody.code == 2 and nobody.error["code"] == "usage"


def _modules_loaded(repo, *args) -> set[str]:
    """The modules a real `swamp ARGS` process imported (Python's -X importtime, on stderr)."""
    p = cli(repo, *args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert p.code in (0, 1), p.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}


def test_access_and_auth_commands_load_nothing_of_serve(tmp_path):
    repo = _checkout(tmp_path)
    assert cli(repo, "access", "token", "mint", "ci", "--user", "ci-bot").code == 0
    for args in (["access", "token", "list"], ["access", "grant", "list"], ["access", "group", "list"],
                 ["access", "check", "--subject", "user:alice", "--action", "run", "--on", "model:hello"],
                 ["access", "can-i", "run", "model:hello", "--token", "ci"], ["access", "reload"],
                 ["auth", "logout", "http://127.0.0.1:9"]):
        loaded = _modules_loaded(repo, *args)
        assert "swamp.cli.main" in loaded or "swamp.cli" in loaded, args  # the parse saw the CLI's imports
        assert not {m for m in loaded if m == "swamp.serve" or m.startswith("swamp.serve.")}, args
