"""`swamp agent setup` and `swamp repo upgrade`: the files coding agents
read, which agents are found, and the rule that neither command changes
what the user wrote without asking (--force shows the difference, --yes
for scripts)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from swamp.repo import agents
from swamp.util import yamlio
from tests.helpers import REPO_ROOT, cli, init_repo, on_a_terminal, snapshot

FILES = {"claude": "CLAUDE.md", "copilot": ".github/copilot-instructions.md", "cursor": ".cursor/rules/swamp.mdc",
         "gemini": "GEMINI.md", "windsurf": ".windsurf/rules/swamp.md"}


@pytest.fixture
def home(tmp_path):
    """A home directory and a PATH with no coding agent on them."""
    h = tmp_path / "home"
    (h / "bin").mkdir(parents=True)
    return h


def run(repo, home, *args, **kw):
    env = {"HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin:/bin"}
    return cli(repo, *args, env=env, **kw)


def fake_command(home: Path, name: str) -> None:
    p = home / "bin" / name
    p.write_text("#!/bin/sh\nexit 0\n")
    p.chmod(0o755)


def test_with_no_agent_found_and_no_terminal_only_agents_md_is_written(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    (repo / "AGENTS.md").unlink()
    r = run(repo, home, "agent", "setup")
    assert r.code == 0, r
    assert r.data["agents"] == ["agents"] and r.data["detected"] is False
    assert r.data["created"] == ["AGENTS.md"]
    assert "swamp model method run" in (repo / "AGENTS.md").read_text()
    assert not any((repo / f).exists() for f in FILES.values())


def test_the_agents_found_get_their_files(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    fake_command(home, "claude")
    (home / ".cursor").mkdir()
    r = run(repo, home, "agent", "setup")
    assert r.code == 0, r
    assert r.data["agents"] == ["claude", "cursor"] and r.data["detected"] is True
    assert r.data["created"] == [".cursor/rules/swamp.mdc", "CLAUDE.md"]
    assert r.data["unchanged"] == ["AGENTS.md"]
    claude = (repo / "CLAUDE.md").read_text()
    assert "@AGENTS.md" in claude  # Claude Code imports the file named so
    cursor = (repo / ".cursor/rules/swamp.mdc").read_text()
    assert cursor.startswith("---\n") and "alwaysApply: true" in cursor and "AGENTS.md" in cursor
    listed = {row["name"]: row for row in run(repo, home, "agent", "list").data}
    assert listed["claude"]["detected"] and listed["claude"]["written"]
    assert listed["cursor"]["written"] and not listed["gemini"]["written"] and not listed["gemini"]["detected"]


def test_all_agents_then_a_second_run_changes_nothing(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    r = run(repo, home, "agent", "setup", "--agent", "all")
    assert r.code == 0, r
    assert sorted(r.data["created"]) == sorted(FILES.values())
    before = snapshot(repo)
    r = run(repo, home, "agent", "setup", "--agent", "all")
    assert r.data["created"] == [] and r.data["updated"] == [] and r.data["kept"] == []
    assert len(r.data["unchanged"]) == len(FILES) + 1
    assert snapshot(repo) == before


def test_an_unknown_agent_is_refused_with_a_suggestion_and_nothing_written(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    before = snapshot(repo)
    r = run(repo, home, "agent", "setup", "--agent", "claud")
    assert r.code == 1, r
    assert r.error["code"] == "usage" and "claud" in r.error["error"]
    assert "claude" in r.error["hint"]
    assert snapshot(repo) == before


def test_outside_a_repository_both_commands_say_so(tmp_path, home):
    for args in (("agent", "setup"), ("repo", "upgrade"), ("agent", "list")):
        r = run(None, home, *args, cwd=tmp_path)
        assert r.code == 1, r
        assert r.error["code"] == "repo_not_found"
    assert list(tmp_path.iterdir()) == [home]


def test_a_file_of_the_users_is_kept_unless_they_agree(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    (repo / "CLAUDE.md").write_text("# My project\n\nUse tabs.\n")
    r = run(repo, home, "agent", "setup", "--agent", "claude")
    assert r.data["kept"] == ["CLAUDE.md"]
    assert (repo / "CLAUDE.md").read_text() == "# My project\n\nUse tabs.\n"
    # --force without a terminal: the difference is reported, nothing written
    r = run(repo, home, "agent", "setup", "--agent", "claude", "--force")
    assert r.data["kept"] == ["CLAUDE.md"] and "+@AGENTS.md" in r.data["diffs"]["CLAUDE.md"]
    assert (repo / "CLAUDE.md").read_text() == "# My project\n\nUse tabs.\n"
    # --yes: swamp's part is added after theirs, which stays
    r = run(repo, home, "agent", "setup", "--agent", "claude", "--yes")
    assert r.data["updated"] == ["CLAUDE.md"]
    text = (repo / "CLAUDE.md").read_text()
    assert text.startswith("# My project\n\nUse tabs.\n") and "@AGENTS.md" in text
    assert run(repo, home, "agent", "setup", "--agent", "claude").data["unchanged"] == ["AGENTS.md", "CLAUDE.md"]


def test_upgrade_refreshes_unedited_files_and_asks_about_edited_ones_on_a_terminal(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    run(repo, home, "agent", "setup", "--agent", "claude", "--agent", "gemini")
    # an older swamp wrote GEMINI.md: its region is swamp's own, unedited, with other words
    (repo / "GEMINI.md").write_text("Mine above.\n\n" + agents.region("Read AGENTS.md (older words).\n"))
    # the user edited swamp's part of CLAUDE.md
    claude = (repo / "CLAUDE.md").read_text().replace("never a\nsecret", "never ever a\nsecret")
    (repo / "CLAUDE.md").write_text(claude)
    r = run(repo, home, "repo", "upgrade")
    assert r.code == 0, r
    assert r.data["updated"] == ["GEMINI.md"] and r.data["kept"] == ["CLAUDE.md"]
    gemini = (repo / "GEMINI.md").read_text()
    assert gemini.startswith("Mine above.\n\n") and "older words" not in gemini and "@AGENTS.md" in gemini
    assert (repo / "CLAUDE.md").read_text() == claude

    env = {"HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin:/bin"}
    shown = on_a_terminal(["repo", "upgrade", "--repo-dir", str(repo), "--force"], b"n\n", env=env)
    assert "-secret in a file" not in shown and "never ever a" in shown and "Replace swamp's part of CLAUDE.md?" in shown
    assert (repo / "CLAUDE.md").read_text() == claude
    on_a_terminal(["repo", "upgrade", "--repo-dir", str(repo), "--force"], b"y\n", env=env)
    assert "never ever" not in (repo / "CLAUDE.md").read_text()


def test_upgrade_migrates_an_older_repository(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    cfg = yamlio.load(repo / ".swamp.yaml")
    cfg["swampVersion"] = "0.0.1"
    (repo / ".swamp.yaml").write_text(yamlio.dumps(cfg))
    shutil.rmtree(repo / "vaults")
    (repo / ".gitignore").write_text("node_modules/\n")
    r = run(repo, home, "repo", "upgrade")
    assert r.code == 0, r
    assert r.data["swampVersion"]["from"] == "0.0.1" and r.data["swampVersion"]["to"] != "0.0.1"
    assert "created vaults/" in r.data["migrated"]
    assert (repo / "vaults").is_dir() and ".swamp/" in (repo / ".gitignore").read_text()
    assert (repo / ".gitignore").read_text().startswith("node_modules/\n")
    assert yamlio.load(repo / ".swamp.yaml")["repoId"] == cfg["repoId"]
    r = run(repo, home, "repo", "upgrade")
    assert r.data["migrated"] == [] and r.data["updated"] == [] and r.data["created"] == []


def _shipped_before_regions() -> list[str]:
    """Every AGENTS.md swamp shipped before it wrote managed regions, from
    git history (the commit that introduced them is 1e15a3e)."""
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("no git history here")
    log = subprocess.run(["git", "log", "--format=%H", "1e15a3e^", "--", "src/swamp/repo/AGENTS.md"],
                         cwd=REPO_ROOT, capture_output=True, text=True)
    if log.returncode != 0 or not log.stdout.split():
        pytest.skip("the history before managed regions is not in this clone")
    return [subprocess.run(["git", "show", f"{c}:src/swamp/repo/AGENTS.md"], cwd=REPO_ROOT, capture_output=True,
                           text=True, check=True).stdout for c in log.stdout.split()]


def test_every_agents_md_of_an_older_swamp_is_refreshed_without_asking(tmp_path, home):
    for i, old in enumerate(_shipped_before_regions()):
        repo = init_repo(tmp_path / f"r{i}")
        (repo / "AGENTS.md").write_text(old)
        r = run(repo, home, "repo", "upgrade")
        assert r.data["updated"] == ["AGENTS.md"], (i, r)
        assert (repo / "AGENTS.md").read_text() == agents.region(agents.shipped_agents())


def test_an_edited_agents_md_of_an_older_swamp_is_kept_and_replaced_with_yes(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    edited = agents.shipped_agents().replace("Always pass `--json`", "Usually pass `--json`")
    (repo / "AGENTS.md").write_text(edited)
    r = run(repo, home, "repo", "upgrade", "--force")
    assert r.data["kept"] == ["AGENTS.md"] and "-- Usually pass" in r.data["diffs"]["AGENTS.md"]
    assert (repo / "AGENTS.md").read_text() == edited
    r = run(repo, home, "repo", "upgrade", "--yes")
    assert r.data["updated"] == ["AGENTS.md"]
    assert (repo / "AGENTS.md").read_text() == agents.region(agents.shipped_agents())


def test_a_directory_where_a_file_should_be_is_a_clear_error(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    (repo / "CLAUDE.md").mkdir()
    before = snapshot(repo)
    r = run(repo, home, "agent", "setup", "--agent", "claude")
    assert r.code == 1, r
    assert r.error["code"] == "not_a_file" and "CLAUDE.md" in r.error["error"]
    assert snapshot(repo) == before
    assert os.path.isdir(repo / "CLAUDE.md")


def test_on_a_terminal_with_no_agent_found_it_asks_which(tmp_path, home):
    repo = init_repo(tmp_path / "r")
    shown = on_a_terminal(["agent", "setup", "--repo-dir", str(repo)], answer=b"gemini, windsurf\n",
                          env={"HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin:/bin"},
                          prompt=b"Agents (comma-separated)")
    assert "No coding agent found here" in shown and "Agents (comma-separated)" in shown  # asked, and answered
    assert (repo / "GEMINI.md").is_file() and (repo / ".windsurf/rules/swamp.md").is_file()
    assert not (repo / "CLAUDE.md").exists()
