"""Upstream's other names for swamp's commands (issue 26): `init` for
`repo init`, the hidden `... list` aliases of the `... search` commands,
and `agent rm` (swamp's part out of one agent's file). An alias gives what
its command gives, and is hidden from help pages."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, ok, run_hello

ALIASES = [
    (("model", "type", "list"), ("model", "type", "search")),
    (("model", "output", "list"), ("model", "output", "search")),
    (("model", "method", "history", "list"), ("model", "method", "history", "search")),
    (("workflow", "run", "list"), ("workflow", "run", "search")),
    (("vault", "type", "list"), ("vault", "type", "search")),
    (("datastore", "type", "list"), ("datastore", "type", "search")),
    (("report", "type", "list"), ("report", "search")),
    (("report", "type", "search"), ("report", "search")),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = init_repo(tmp_path_factory.mktemp("aliases") / "r")
    ok(r, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    run_hello(r, "one")
    return r


@pytest.mark.parametrize("alias,command", ALIASES, ids=[" ".join(a) for a, _ in ALIASES])
def test_a_list_alias_gives_what_its_command_gives(repo, alias, command):
    assert ok(repo, *alias) == ok(repo, *command)


def test_list_aliases_are_hidden_from_help(repo):
    for group in (("model", "type"), ("model", "output"), ("vault", "type"), ("datastore", "type"),
                  ("report", "type")):
        page = cli(None, *group, "--help", json=False).stdout
        assert "search" in page and "  list " not in page, group


def test_init_is_repo_init(tmp_path):
    made = ok(None, "init", str(tmp_path / "new"))
    assert (tmp_path / "new" / ".swamp.yaml").is_file() and made["path"] == str(tmp_path / "new")
    assert "init" in cli(None, "--help", json=False).stdout


# ------------------------------------------------ agent rm
def test_agent_rm_takes_out_swamps_part_and_keeps_the_users(tmp_path):
    repo = init_repo(tmp_path / "r")
    ok(repo, "agent", "setup", "--agent", "cursor", "--agent", "claude")
    assert (repo / ".cursor" / "rules" / "swamp.mdc").is_file()
    gone = ok(repo, "agent", "rm", "cursor")
    assert gone == {"name": "cursor", "path": ".cursor/rules/swamp.mdc", "result": "deleted"}
    assert not (repo / ".cursor" / "rules" / "swamp.mdc").exists()

    claude = repo / "CLAUDE.md"
    claude.write_text("# my own notes\n\n" + claude.read_text())
    assert ok(repo, "agent", "rm", "claude")["result"] == "stripped"
    assert claude.read_text() == "# my own notes\n" and (repo / "AGENTS.md").is_file()
    assert ok(repo, "agent", "rm", "claude")["result"] == "absent"  # again: nothing to do, not an error


def test_agent_rm_keeps_an_edited_part_without_consent(tmp_path):
    repo = init_repo(tmp_path / "r")
    ok(repo, "agent", "setup", "--agent", "gemini")
    gemini = repo / "GEMINI.md"
    gemini.write_text(gemini.read_text().replace("Before working here", "Before you work here"))
    edited = gemini.read_text()
    r = cli(repo, "agent", "rm", "gemini")
    assert r.code == 1 and r.error["code"] == "conflict" and "-y" in r.error["hint"]
    assert gemini.read_text() == edited
    assert ok(repo, "agent", "rm", "gemini", "-y")["result"] == "deleted"


def test_agent_rm_refuses_agents_md_and_unknown_names(tmp_path):
    repo = init_repo(tmp_path / "r")
    for name in ("agents", "codex", "all"):
        r = cli(repo, "agent", "rm", name)
        assert r.code == 2 and r.error["code"] == "usage" and "AGENTS.md" in r.error["hint"], name
    r = cli(repo, "agent", "rm", "claud")
    assert r.error["code"] == "usage" and "claude" in r.error["hint"]
    assert (repo / "AGENTS.md").is_file()
