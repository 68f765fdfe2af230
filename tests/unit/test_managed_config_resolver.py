"""The one resolver of managed config (Repo.config_root): where
definitions, workflows and vault configs are read and written, and the
pull-before-first-read hook, once per context (a CLI command, a serve
request)."""

from __future__ import annotations

import contextvars

from tests.helpers import init_repo


def _repo(path, managed: bool):
    from swamp.repo.context import Repo

    root = init_repo(path)
    if managed:
        with open(root / ".swamp.yaml", "a") as f:
            f.write("managedConfig: true\n")
    return Repo.open(root)


def test_without_managed_config_documents_are_files_of_the_repository(tmp_path):
    repo = _repo(tmp_path / "r", managed=False)
    calls = []
    repo.on_config_read = calls.append
    assert repo.models_dir == repo.root / "models"
    assert repo.workflows_dir == repo.root / "workflows" and repo.vaults_dir == repo.root / "vaults"
    repo.write_config(repo.models_dir / "t" / "x.yaml", "a: 1\n")
    assert (repo.root / "models" / "t" / "x.yaml").read_text() == "a: 1\n"
    repo.remove_config(repo.models_dir / "t" / "x.yaml")
    assert not (repo.root / "models" / "t" / "x.yaml").exists()
    assert calls == []  # nothing to pull


def test_with_managed_config_documents_live_in_the_datastore_and_the_hook_runs_once_per_context(tmp_path):
    repo = _repo(tmp_path / "r", managed=True)
    calls = []
    repo.on_config_read = calls.append
    assert repo.models_dir == repo.datastore.root / "models"
    assert repo.workflows_dir == repo.datastore.root / "workflows"
    assert len(calls) == 1  # once in this context, however often the config is read
    contextvars.copy_context().run(lambda: repo.vaults_dir)  # a copy of this context: already fresh
    assert len(calls) == 1

    def request():
        from swamp.app.managed_config import new_request

        new_request()  # what serve does as each request starts
        return repo.models_dir, repo.vaults_dir

    contextvars.copy_context().run(request)
    contextvars.copy_context().run(request)
    assert len(calls) == 3  # once per request
    repo.models_dir
    assert len(calls) == 3  # the requests' scopes did not leak here
    path = repo.workflows_dir / "workflow-w.yaml"
    assert repo.config_rel(path) == "workflows/workflow-w.yaml"
    repo.write_config(path, "name: w\n")
    assert repo.datastore.read_bytes("workflows/workflow-w.yaml") == b"name: w\n"
    repo.remove_config(path)
    assert not repo.datastore.exists("workflows/workflow-w.yaml")


def test_a_managed_documents_lease_names_its_kind_and_name():
    from swamp.repo.context import config_lease

    assert config_lease("model", "hello") == "config/model/hello"
