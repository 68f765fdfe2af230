"""The README's demo: `python -m swamp.demo` builds a fresh repository, runs
its workflow on the filesystem datastore and prints the run and the data."""

from __future__ import annotations

import subprocess

from tests.helpers import PYTHON, _env


def demo(*args, cwd):
    return subprocess.run([PYTHON, "-m", "swamp.demo", *map(str, args)], capture_output=True, text=True,
                          env=_env(), cwd=cwd, timeout=120)


def test_the_demo_runs_its_workflow_and_shows_the_data(tmp_path):
    p = demo(cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    repo = tmp_path / "demo-repo"
    assert (repo / ".swamp.yaml").is_file() and (repo / "workflows" / "workflow-demo.yaml").is_file()
    out = p.stdout
    assert "workflow demo: run" in out and "succeeded" in out
    for region in ("eu-west", "us-east", "ap-south"):
        assert f"check-{region}" in out and f"{region} answered in" in out
    assert "report: eu-west answered" in out
    assert list((repo / ".swamp" / "workflow-runs").iterdir())


def test_the_demo_replaces_only_its_own_repository_and_only_with_force(tmp_path):
    assert demo(tmp_path / "d", cwd=tmp_path).returncode == 0
    again = demo(tmp_path / "d", cwd=tmp_path)
    assert again.returncode == 2 and "pass --force" in again.stderr
    assert demo(tmp_path / "d", "--force", cwd=tmp_path).returncode == 0
    other = tmp_path / "precious"
    other.mkdir()
    (other / "file.txt").write_text("keep me")
    refused = demo(other, "--force", cwd=tmp_path)
    assert refused.returncode == 2 and "not a swamp repository" in refused.stderr
    assert (other / "file.txt").read_text() == "keep me"
