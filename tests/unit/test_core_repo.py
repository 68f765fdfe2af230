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
    # An AGENTS.md the user edited is kept (without a terminal nobody was asked) ...
    assert (tmp_path / "AGENTS.md").read_text() == "scribbled over\n"
    assert r.data["kept"] == ["AGENTS.md"] and "AGENTS.md" not in r.data["created"]
    # ... and replaced only when they say so.
    r = invoke(None, "repo", "init", tmp_path, "--force", "--yes")
    assert r.data["created"] == ["AGENTS.md"]
    assert "swamp model method run" in (tmp_path / "AGENTS.md").read_text()
    # A second --force run has nothing left to create or keep.
    r = invoke(None, "repo", "init", tmp_path, "--force")
    assert r.data["created"] == [] and r.data["kept"] == []


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


def test_force_on_a_terminal_shows_the_difference_and_asks(tmp_path):
    from tests.helpers import on_a_terminal

    invoke(None, "repo", "init", tmp_path)
    (tmp_path / "AGENTS.md").write_text("my own notes\n")
    shown = on_a_terminal(["repo", "init", str(tmp_path), "--force"], b"n\n")
    assert "-my own notes" in shown and "Replace it with swamp's?" in shown
    assert (tmp_path / "AGENTS.md").read_text() == "my own notes\n"
    on_a_terminal(["repo", "init", str(tmp_path), "--force"], b"y\n")
    assert "swamp model method run" in (tmp_path / "AGENTS.md").read_text()


def test_files_meant_for_git_follow_the_umask_and_secrets_stay_private(tmp_path):
    import os
    import stat

    from tests.helpers import cli

    old = os.umask(0o022)
    try:
        repo = tmp_path / "r"
        assert cli(None, "repo", "init", str(repo)).code == 0
        assert cli(repo, "model", "create", "command/shell", "h", "--global-arg", "run=true").code == 0
        assert cli(repo, "vault", "create", "local_encryption", "v").code == 0
        assert cli(repo, "vault", "put", "v", "token", input="s3cret\n").code == 0
    finally:
        os.umask(old)

    def mode(p):
        return stat.S_IMODE(p.stat().st_mode)

    for shared in (".swamp.yaml", ".gitignore", "AGENTS.md", "models/command/shell/h.yaml",
                   "vaults/local_encryption/v.yaml"):
        assert mode(repo / shared) == 0o644, shared
    secrets = repo / ".swamp" / "secrets"
    assert [p for p in secrets.rglob("*") if p.is_file()]
    for p in secrets.rglob("*"):
        assert mode(p) & 0o077 == 0, p  # nobody but the owner
