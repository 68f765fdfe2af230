"""swamp repo init: what it creates, the managed .gitignore block, and the
refusal to initialise twice."""

from __future__ import annotations

from swamp.util import yamlio
from tests.helpers import cli, invoke, snapshot


def test_init_creates_the_layout_and_reports_it(tmp_path):
    root = tmp_path / "proj"
    r = invoke(None, "repo", "init", root)
    assert r.code == 0, r
    out = r.data
    assert out["path"] == str(root)
    assert out["created"] == sorted(out["created"])
    for entry in [".swamp.yaml", "models/", "workflows/", "vaults/", "extensions/models/", ".swamp/",
                  ".gitignore", "AGENTS.md"]:
        assert entry in out["created"], entry
        assert (root / entry.rstrip("/")).exists(), entry
    cfg = yamlio.load(root / ".swamp.yaml")
    assert cfg["repoId"] and cfg["swampVersion"] and cfg["initializedAt"]
    assert ".swamp/" in (root / ".gitignore").read_text().splitlines()


def test_agents_md_teaches_the_commands_with_json(tmp_path):
    invoke(None, "repo", "init", tmp_path)
    text = (tmp_path / "AGENTS.md").read_text()
    for needle in ["--json", "swamp model create", "swamp model method run", "swamp data get",
                   "swamp data versions", "extensions/models/", "models/"]:
        assert needle in text, needle


def test_second_init_is_refused_and_changes_nothing(tmp_path):
    invoke(None, "repo", "init", tmp_path)
    before = snapshot(tmp_path)
    r = invoke(None, "repo", "init", tmp_path)
    assert r.code == 1, r
    err = r.error
    assert err["code"] == "exists"
    assert "--force" in err["hint"]
    assert snapshot(tmp_path) == before


def test_force_keeps_the_repo_identity_and_user_gitignore_lines(tmp_path):
    (tmp_path / ".gitignore").write_text("node_modules/\n*.log\n")
    invoke(None, "repo", "init", tmp_path)
    repo_id = yamlio.load(tmp_path / ".swamp.yaml")["repoId"]
    gi = (tmp_path / ".gitignore").read_text()
    assert gi.startswith("node_modules/\n*.log\n")
    (tmp_path / "AGENTS.md").write_text("scribbled over\n")

    for _ in range(2):
        r = invoke(None, "repo", "init", tmp_path, "--force")
        assert r.code == 0, r
    assert yamlio.load(tmp_path / ".swamp.yaml")["repoId"] == repo_id
    gi2 = (tmp_path / ".gitignore").read_text()
    assert gi2 == gi, "the managed block is idempotent"
    assert gi2.count("# >>> swamp managed >>>") == 1
    assert "swamp model method run" in (tmp_path / "AGENTS.md").read_text()
    # A second --force run has nothing left to create.
    r = invoke(None, "repo", "init", tmp_path, "--force")
    assert ".gitignore" not in r.data["created"]


def test_managed_block_is_replaced_in_place(tmp_path):
    (tmp_path / ".gitignore").write_text(
        "top\n# >>> swamp managed >>>\nold-stuff/\n# <<< swamp managed <<<\nbottom\n")
    invoke(None, "repo", "init", tmp_path)
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[0] == "top" and lines[-1] == "bottom"
    assert "old-stuff/" not in lines and ".swamp/" in lines


def test_commands_outside_a_repository_say_so(tmp_path):
    r = cli(None, "model", "search", env={}, cwd=tmp_path)
    assert r.code == 1, r
    assert r.error["code"] == "repo_not_found"
    assert "swamp repo init" in r.error["hint"]
    r = invoke(tmp_path, "model", "search")
    assert r.code == 1 and r.error["code"] == "repo_not_found"
