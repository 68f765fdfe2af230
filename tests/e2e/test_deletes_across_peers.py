"""Review findings: deletes and version numbers across peers (S3, S4),
through the `swamp` command against a real S3 server (SeaweedFS)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ok, peer_from_git, repo_with_hello_runs, run_hello, s3_setup_args

pytestmark = pytest.mark.slow


@pytest.fixture
def s3(seaweedfs):
    return s3_setup_args(seaweedfs)


def version_dirs(repo: Path, name: str) -> dict[str, list[str]]:
    """version -> files present in that version directory, on disk."""
    out = {}
    for d in (repo / ".swamp" / "data").rglob(name):
        if d.is_dir():
            for v in sorted(p for p in d.iterdir() if p.is_dir()):
                out[v.name] = sorted(f.name for f in v.iterdir())
    return out


def test_a_lazy_peer_deleting_a_version_deletes_its_content_everywhere(tmp_path, s3):
    """S4: B (lazy hydration) never read version 1, so its raw file is not
    on B's disk. Deleting the version must still commit the delete of the
    raw file; otherwise every full peer keeps it forever."""
    a = repo_with_hello_runs(tmp_path / "a", 3)
    ok(a, "datastore", "setup", *s3)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *s3, "--hydration", "lazy")
    ok(b, "data", "delete", "hello", "result", "--version", "1", "-y")
    ok(a, "datastore", "sync")
    assert "1" not in version_dirs(a, "result"), version_dirs(a, "result")
    c = peer_from_git(a, tmp_path / "c")
    ok(c, "datastore", "setup", *s3)
    assert "1" not in version_dirs(c, "result"), version_dirs(c, "result")


def test_model_delete_force_never_gives_a_version_number_out_again(tmp_path, s3):
    """S3: A deletes the model with its data; B, whose checkout still has
    the definition (same model id), runs it. The new version must not
    reuse number 1..3, which readers saw with other content."""
    a = repo_with_hello_runs(tmp_path / "a", 3)
    ok(a, "datastore", "setup", *s3)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *s3)
    seen = ok(b, "data", "get", "hello", "result", "--version", "1")
    ok(a, "model", "delete", "hello", "--force", "-y")
    version = run_hello(b, "after-delete")["dataArtifacts"][0]["version"]
    assert version > 3, f"version {version} was published before with {seen['sha256']}"


def test_a_lazy_peer_deleting_a_model_deletes_its_contents_everywhere(tmp_path, s3):
    """S4, `model delete --force` from a lazily hydrated peer: no raw file
    of the model stays behind on the full peers."""
    a = repo_with_hello_runs(tmp_path / "a", 3)
    ok(a, "datastore", "setup", *s3)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *s3, "--hydration", "lazy")
    ok(b, "model", "delete", "hello", "--force", "-y")
    ok(a, "datastore", "sync")
    assert not list((a / ".swamp" / "data").rglob("raw"))
    assert not list((a / ".swamp" / "data").rglob("metadata.yaml"))
    assert ok(a, "data", "list") == []


@pytest.mark.parametrize("where", ["elsewhere", "the-cache-itself"])
def test_a_lazy_peer_moving_to_a_directory_datastore_keeps_every_content(tmp_path, s3, where):
    """`datastore setup filesystem` copies the state into the directory;
    from a lazily hydrated cache, contents never fetched must be copied too
    (fetched first), not silently left behind."""
    a = repo_with_hello_runs(tmp_path / "a", 2)
    ok(a, "datastore", "setup", *s3)
    b = peer_from_git(a, tmp_path / "b")
    ok(b, "datastore", "setup", *s3, "--hydration", "lazy")
    target = tmp_path / "dir" if where == "elsewhere" else b / ".swamp"
    ok(b, "datastore", "setup", "filesystem", "--path", str(target))
    for v in (1, 2):
        got = ok(b, "data", "get", "hello", "result", "--version", str(v))
        assert got["content"]["stdout"] == f"a{v - 1}"
