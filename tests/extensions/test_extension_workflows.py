"""Workflows shipped in an extension package (issue 26, form 7b), as it
ships model types: its `swamp.workflows` entry point names a folder laid
out as `workflows/`, and `@EXTENSION/NAME` runs, validates and shows its
history like a repository's own. The files come from the pinned,
hash-checked install (a changed one is refused) or a local checkout; the
repository's own file of that name wins; an extension's workflow is not
deleted from the repository; a folder outside the package names nothing."""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.extensions.wheels import TYPE_MODULE
from tests.helpers import cli, init_repo

WORKFLOW = """
id: 0b7e6a0e-5f9a-4b49-8a51-{suffix}
name: "@{ext}/{name}"
description: shipped with the extension
jobs:
  - name: main
    steps:
      - name: greet
        task: {{type: model_method, modelIdOrName: greeter, methodName: {method}}}
"""


def _wheel(dest: Path, name: str, version: str, *, folder: str = "workflows",
           workflows: tuple[str, ...] = ("greet-all",), with_type: bool = True, method: str = "hello") -> Path:
    """A wheel with one model type (`<name>/t`; none without ``with_type``)
    and workflows under `<module>/workflows/@<name>/`, declared in
    `swamp.workflows`."""
    mod = name.replace("-", "_")
    dist = f"{mod}-{version}"
    path = dest / f"{dist}-py3-none-any.whl"
    eps = (f"[swamp.model_types]\nt = {mod}.t:model\n\n" if with_type else "") \
        + f"[swamp.workflows]\nworkflows = {mod}.{folder}\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{mod}/__init__.py", "")
        if with_type:
            z.writestr(f"{mod}/t.py", TYPE_MODULE.format(type=f"{name}/t", name=name, version=version))
        for i, wf in enumerate(workflows):
            z.writestr(f"{mod}/workflows/@{name}/workflow-{wf}.yaml",
                       textwrap.dedent(WORKFLOW.format(ext=name, name=wf, suffix=f"{i:012d}", method=method)).lstrip())
        z.writestr(f"{dist}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                              "Tag: py3-none-any\n")
        z.writestr(f"{dist}.dist-info/entry_points.txt", eps)
        z.writestr(f"{dist}.dist-info/RECORD", "")
    return path


def _pulled(tmp_path, pypi, name: str, **kw) -> Path:
    _wheel(pypi.packages, name, "1.0", **kw)
    repo = init_repo(tmp_path / "repo")
    r = cli(repo, "extension", "pull", name, "--index", pypi.url)
    assert r.code == 0, r
    assert cli(repo, "model", "create", f"{name}/t", "greeter").code == 0
    return repo


def test_a_pinned_extensions_workflow_runs_by_its_scoped_name(tmp_path, pypi):
    repo = _pulled(tmp_path, pypi, "wfx-alpha")
    run = cli(repo, "workflow", "run", "@wfx-alpha/greet-all")
    assert run.code == 0, run
    assert run.data["status"] == "succeeded" and run.data["workflowName"] == "@wfx-alpha/greet-all"
    got = cli(repo, "workflow", "history", "get", "@wfx-alpha/greet-all")  # a name means its newest run
    assert got.code == 0 and got.data["id"] == run.data["id"]
    valid = cli(repo, "workflow", "validate", "@wfx-alpha/greet-all")
    assert valid.code == 0, valid
    missing = cli(repo, "workflow", "run", "@wfx-alpha/nope")
    assert missing.code != 0 and missing.error["code"] == "not_found"
    nobody = cli(repo, "workflow", "run", "@nobody/greet-all")  # no extension of that name: nothing installed
    assert nobody.code != 0 and nobody.error["code"] == "not_found"

    refused = cli(repo, "workflow", "delete", "@wfx-alpha/greet-all", "-y")
    assert refused.code != 0 and refused.error["code"] == "conflict" and "shipped by an extension" in \
        refused.error["error"]
    assert cli(repo, "workflow", "run", "@wfx-alpha/greet-all").code == 0  # still there


def test_a_changed_installed_workflow_is_refused(tmp_path, pypi):
    repo = _pulled(tmp_path, pypi, "wfx-beta")
    assert cli(repo, "workflow", "run", "@wfx-beta/greet-all").code == 0
    [installed] = list((repo / ".swamp").glob("**/wfx_beta/workflows/@wfx-beta/workflow-greet-all.yaml"))
    installed.write_text(installed.read_text().replace("greet", "greet-and-more"))  # someone edits the install
    r = cli(repo, "workflow", "run", "@wfx-beta/greet-all")
    assert r.code != 0, r
    assert "changed" in r.error["error"] or "tamper" in r.error["error"].lower(), r.error


def test_the_repositorys_own_file_wins(tmp_path, pypi):
    repo = _pulled(tmp_path, pypi, "wfx-gamma")
    own = repo / "workflows" / "@wfx-gamma" / "workflow-greet-all.yaml"
    own.parent.mkdir(parents=True)
    own.write_text(textwrap.dedent("""
        name: "@wfx-gamma/greet-all"
        jobs:
          - name: main
            steps:
              - {name: mine, task: {type: assert, expr: "${{ true }}", message: ours}}
    """).lstrip())
    run = cli(repo, "workflow", "run", "@wfx-gamma/greet-all")
    assert run.code == 0, run
    assert [s["name"] for j in run.data["jobs"] for s in j["steps"]] == ["mine"]


def test_a_folder_outside_the_package_names_nothing(tmp_path, pypi):
    repo = _pulled(tmp_path, pypi, "wfx-delta", folder="..")
    r = cli(repo, "workflow", "run", "@wfx-delta/greet-all")
    assert r.code != 0 and r.error["code"] == "not_found"


@pytest.mark.slow
def test_a_checkouts_workflows_load_from_the_checkout(tmp_path):
    ext = tmp_path / "wfx-src"
    assert cli(None, "extension", "new", "wfx-src", "--path", ext, cwd=tmp_path).code == 0
    with open(ext / "pyproject.toml", "a") as f:
        f.write('\n[project.entry-points."swamp.workflows"]\nworkflows = "wfx_src.workflows"\n')
    folder = ext / "src" / "wfx_src" / "workflows" / "@wfx-src"
    folder.mkdir(parents=True)
    (folder / "workflow-check.yaml").write_text(textwrap.dedent("""
        name: "@wfx-src/check"
        jobs:
          - name: main
            steps:
              - {name: ok, task: {type: assert, expr: "${{ true }}", message: fine}}
    """).lstrip())
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "extension", "source", "add", ext).code == 0
    run = cli(repo, "workflow", "run", "@wfx-src/check")
    assert run.code == 0 and run.data["status"] == "succeeded", run


def test_an_extension_that_ships_only_workflows_is_pulled_and_its_workflow_runs(tmp_path, pypi):
    _wheel(pypi.packages, "wfx-only", "1.0", with_type=False, method="execute")
    repo = init_repo(tmp_path / "repo")
    pulled = cli(repo, "extension", "pull", "wfx-only", "--index", pypi.url)
    assert pulled.code == 0, pulled
    # its workflow runs a model the repository defines, of a builtin type
    assert cli(repo, "model", "create", "command/shell", "greeter", "--global-arg", "run=echo hi").code == 0
    run = cli(repo, "workflow", "run", "@wfx-only/greet-all")
    assert run.code == 0 and run.data["status"] == "succeeded", run


def test_a_package_that_ships_nothing_swamp_reads_is_refused_naming_what_it_could_ship(tmp_path, pypi):
    _wheel(pypi.packages, "wfx-empty", "1.0", with_type=False, workflows=())
    repo = init_repo(tmp_path / "repo")
    refused = cli(repo, "extension", "pull", "wfx-empty", "--index", pypi.url)
    assert refused.code != 0 and "provides no model type, vault type, report type or workflow" in \
        refused.error["error"], refused
    assert "swamp.workflows" in refused.error["hint"]
