"""`swamp completions`: the scripts, and the names offered when the shell
calls swamp back the way click's scripts do (``_SWAMP_COMPLETE`` and
``COMP_WORDS``/``COMP_CWORD``), read from the repository without changing it."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import PYTHON, _env, cli, init_repo, ok, snapshot, write_shell, write_workflow


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = init_repo(tmp_path_factory.mktemp("completions") / "repo")
    for name in ("hello", "help-desk", "other"):
        write_shell(r, name, f"""
            type: command/shell
            name: {name}
            globalArguments:
              run: echo {name}
        """)
    for name in ("deploy", "nightly"):
        write_workflow(r, name, """
            jobs:
              - name: j
                steps:
                  - {name: s, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
        """)
    ok(r, "vault", "create", "local_encryption", "prod")
    ok(r, "vault", "create", "local_encryption", "staging")
    ok(r, "model", "method", "run", "hello", "execute")
    return r


def complete(words: str, cwd, shell: str = "bash", **env) -> list[str]:
    """What the shell would be offered for ``words`` (the word being
    completed is the last one; a trailing space starts a new one)."""
    parts = words.split(" ")
    e = _env({"_SWAMP_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1),
              **env})
    if shell == "fish":
        e["COMP_WORDS"], e["COMP_CWORD"] = words, parts[-1]
    p = subprocess.run([PYTHON, "-m", "swamp"], env=e, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    # bash and fish: one "type,value" a line (fish adds a tab and the help)
    return [line.split(",", 1)[1].split("\t")[0] for line in p.stdout.splitlines() if line]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_for_each_shell_calls_swamp_back(tmp_path, shell):
    r = cli(None, "completions", shell, json=False, cwd=tmp_path)
    assert r.code == 0, r
    assert f"_SWAMP_COMPLETE={shell}_source" not in r.stdout
    assert f"{shell}_complete" in r.stdout and "swamp" in r.stdout
    data = ok(None, "completions", shell, cwd=tmp_path)
    assert data["shell"] == shell and data["script"] == r.stdout.rstrip("\n") + ("\n" if data["script"].endswith("\n") else "")
    assert "swamp completions" in data["install"]


def test_an_unknown_shell_is_a_usage_error(tmp_path):
    r = cli(None, "completions", "powershell", cwd=tmp_path)
    assert r.code == 2
    assert r.error["code"] == "usage" and "bash" in r.error["error"]
    r = cli(None, "completions", cwd=tmp_path)
    assert r.code == 2


def test_commands_and_groups_complete(repo):
    assert complete("swamp comp", repo) == ["completions"]
    assert "method" in complete("swamp model ", repo)


def test_model_names_and_their_methods_and_data(repo):
    assert complete("swamp model get ", repo) == ["hello", "help-desk", "other"]
    assert complete("swamp model get hel", repo) == ["hello", "help-desk"]
    assert complete("swamp model method run hello ", repo) == ["execute"]
    assert complete("swamp data list ", repo) == ["hello", "help-desk", "other"]
    assert complete("swamp data get hello ", repo) == ["log", "result"]
    assert complete("swamp data get other ", repo) == []  # never ran: no data
    assert "command/shell" in complete("swamp model type describe comm", repo)


def test_workflow_and_vault_names(repo):
    assert complete("swamp workflow run ", repo) == ["deploy", "nightly"]
    assert complete("swamp workflow get n", repo) == ["nightly"]
    assert complete("swamp vault put ", repo) == ["prod", "staging"]
    assert complete("swamp vault list-keys st", repo) == ["staging"]


def test_a_new_name_is_not_completed_but_its_type_is(repo):
    assert complete("swamp model create command/shell ", repo) == []
    assert "command/shell" in complete("swamp model create comm", repo)


def test_repo_dir_on_the_line_or_in_the_environment_chooses_the_repository(repo, tmp_path):
    assert complete(f"swamp model get --repo-dir {repo} ", tmp_path) == ["hello", "help-desk", "other"]
    assert complete("swamp workflow run ", tmp_path, SWAMP_REPO_DIR=str(repo)) == ["deploy", "nightly"]


def test_fish_gets_the_same_names(repo):
    assert complete("swamp model get ", repo, shell="fish") == ["hello", "help-desk", "other"]


def test_bad_places_offer_nothing_and_say_nothing(repo, tmp_path):
    # outside any repository, an unknown model, a missing --repo-dir: no names, no error, exit 0
    assert complete("swamp model get ", tmp_path) == []
    assert complete("swamp model method run nosuch ", repo) == []
    assert complete("swamp data get nosuch ", repo) == []
    assert complete(f"swamp model get --repo-dir {tmp_path / 'missing'} ", tmp_path) == []


def test_completing_changes_nothing(repo):
    before = snapshot(repo)
    for words in ("swamp model get ", "swamp data get hello ", "swamp workflow run ", "swamp vault put ",
                  "swamp model method run hello "):
        complete(words, repo)
    assert snapshot(repo) == before
