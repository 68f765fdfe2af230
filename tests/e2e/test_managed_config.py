"""Managed config: `swamp datastore config migrate` moves definitions,
workflows, vault configurations and the lockfile into the shared
datastore, and from then on every peer reads and changes them there, each
document in its own session under its own lease. Through the `swamp`
command, peers on SeaweedFS (some behind a fault proxy)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.faultproxy import Fault
from tests.helpers import cli, init_repo, ok, on_a_terminal, s3_setup_args

pytestmark = [pytest.mark.slow, pytest.mark.s3]

WORKFLOW = """\
name: greet
jobs:
  - name: j
    steps:
      - {name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
"""


def _managed_peer(path: Path, setup: list[str]) -> Path:
    """A checkout with no config files of its own that reads the config tier."""
    repo = init_repo(path)
    ok(repo, "datastore", "setup", *setup)
    assert ok(repo, "datastore", "config", "migrate")["copied"] == []
    return repo


def _names(repo: Path) -> list[str]:
    return [m["name"] for m in ok(repo, "model", "search")]


def test_after_migrate_a_peer_without_the_files_sees_and_runs_the_model_and_workflow(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = init_repo(tmp_path / "a")
    ok(a, "model", "create", "command/shell", "hello", "--global-arg", "run=echo from-the-tier")
    (a / "workflows").mkdir(exist_ok=True)
    (a / "workflows" / "workflow-greet.yaml").write_text(WORKFLOW)
    ok(a, "vault", "create", "local_encryption", "keys")
    ok(a, "datastore", "setup", *setup)

    plan = ok(a, "datastore", "config", "migrate", "--dry-run")
    assert plan["copy"] == ["models/command/shell/hello.yaml", "vaults/local_encryption/keys.yaml",
                            "workflows/workflow-greet.yaml"]
    assert not ok(a, "datastore", "config", "status")["managed"]  # a dry run changes nothing

    done = ok(a, "datastore", "config", "migrate")
    assert done["managed"] is True and done["copied"] == plan["copy"]
    assert "no longer read" in done["repositoryFiles"]
    assert (a / "models" / "command" / "shell" / "hello.yaml").is_file()  # left in place
    assert "managedConfig: true" in (a / ".swamp.yaml").read_text()
    status = ok(a, "datastore", "config", "status")
    assert status["managed"] and status["readsFrom"] == "datastore"
    assert status["datastore"]["models"] == 1 and status["datastore"]["workflows"] == 1
    assert any("no longer read" in n for n in status["notes"])
    assert ok(a, "model", "get", "hello")["path"] == ".swamp/models/command/shell/hello.yaml"

    b = init_repo(tmp_path / "b")  # a new machine: no definitions, no workflows
    ok(b, "datastore", "setup", *setup)
    assert "a peer migrated" in " ".join(ok(b, "datastore", "config", "status")["notes"])
    assert cli(b, "model", "get", "hello").code == 1  # not managed yet: it reads its (empty) repository
    ok(b, "datastore", "config", "migrate")
    assert _names(b) == ["hello"]
    assert [v["name"] for v in ok(b, "vault", "list")] == ["keys"]
    ok(b, "model", "method", "run", "hello", "execute")
    run = ok(b, "workflow", "run", "greet")
    assert run["status"] == "succeeded", run
    assert "from-the-tier" in ok(a, "data", "get", "hello", "result")["content"]["stdout"]

    # The repository's old copy is no longer read.
    (a / "models" / "command" / "shell" / "hello.yaml").write_text(
        "type: command/shell\nname: hello\nglobalArguments: {run: echo stale}\n")
    assert ok(a, "model", "get", "hello")["globalArguments"]["run"] == "echo from-the-tier"


def test_two_peers_creating_definitions_at_once_keep_all_of_them(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = _managed_peer(tmp_path / "a", setup)
    b = _managed_peer(tmp_path / "b", setup)
    errors: list = []

    def create(repo: Path, names: list[str]) -> None:
        for n in names:
            r = cli(repo, "model", "create", "command/shell", n, "--global-arg", f"run=echo {n}")
            if r.code != 0:
                errors.append(r)

    threads = [threading.Thread(target=create, args=(a, ["a1", "a2", "a3"])),
               threading.Thread(target=create, args=(b, ["b1", "b2", "b3"])),
               threading.Thread(target=create, args=(b, ["b4", "b5"]))]  # two processes in one checkout too
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    everyone = ["a1", "a2", "a3", "b1", "b2", "b3", "b4", "b5"]
    assert _names(a) == everyone
    assert _names(b) == everyone
    log = ok(a, "datastore", "log", "--limit", "50")
    assert not any(".lock" in c["path"] for entry in log for c in entry.get("changes", []))

    # The same name on two peers: the second is refused, the first stays.
    r = cli(b, "model", "create", "command/shell", "a1", "--global-arg", "run=echo other")
    assert r.code == 1 and "already exists" in r.error["error"]
    assert ok(a, "model", "get", "a1")["globalArguments"]["run"] == "echo a1"


EDITOR = """\
touch "{started}"
while [ ! -f "{go}" ]; do sleep 0.1; done
sed -i 's/echo x/echo edited/' "$1"
"""


def test_a_stale_peer_editing_one_definition_keeps_the_definitions_peers_added_meanwhile(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = _managed_peer(tmp_path / "a", setup)
    b = _managed_peer(tmp_path / "b", setup)
    ok(a, "model", "create", "command/shell", "x", "--global-arg", "run=echo x")
    assert _names(b) == ["x"]

    started, go = tmp_path / "started", tmp_path / "go"
    script = tmp_path / "editor.sh"
    script.write_text(EDITOR.format(started=started, go=go))
    out: list[str] = []
    editing = threading.Thread(target=lambda: out.append(on_a_terminal(
        ["model", "edit", "x", "--repo-dir", str(b)], env={"EDITOR": f"sh {script}"})))
    editing.start()
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists(), "the editor never opened"
    # While b's editor is open (b read x before these), a adds two definitions.
    ok(a, "model", "create", "command/shell", "y", "--global-arg", "run=echo y")
    ok(a, "model", "create", "command/shell", "z", "--global-arg", "run=echo z")
    go.touch()
    editing.join(90)
    assert "ok" in out[0] and "error" not in out[0].lower(), out[0]

    for peer in (a, b):
        assert _names(peer) == ["x", "y", "z"]
        assert ok(peer, "model", "get", "x")["globalArguments"]["run"] == "echo edited"
        assert ok(peer, "model", "get", "y")["globalArguments"]["run"] == "echo y"
    assert any(entry["command"] == "model edit x" for entry in ok(a, "datastore", "log", "--limit", "10"))

    # A peer deleting one definition leaves the others.
    ok(b, "model", "delete", "y", "-y")
    assert _names(a) == ["x", "z"]


def test_migrate_whose_commit_fails_exits_1_and_a_rerun_completes_it(proxied):
    proxy, a, b = proxied  # both have models/command/shell/hello.yaml from git
    (a / "workflows").mkdir(exist_ok=True)
    (a / "workflows" / "workflow-greet.yaml").write_text(WORKFLOW)
    proxy.fail_matching("PUT", "/log/", Fault("status", status=403))
    r = cli(a, "datastore", "config", "migrate", "--remove-repo-files")
    assert r.code == 1 and r.error["code"] == "unpublished", r
    assert r.data["published"] is False and r.data["managed"] is False
    assert "managedConfig" not in (a / ".swamp.yaml").read_text()
    assert not ok(a, "datastore", "config", "status", "--offline")["managed"]
    assert (a / "workflows" / "workflow-greet.yaml").is_file()  # nothing removed while unpublished

    proxy.clear()
    done = ok(a, "datastore", "config", "migrate", "--remove-repo-files")
    assert done["managed"] is True
    assert done["alreadyThere"] == ["models/command/shell/hello.yaml", "workflows/workflow-greet.yaml"]
    assert done["removed"] == ["models/command/shell/hello.yaml", "workflows/workflow-greet.yaml"]
    assert not (a / "models").exists() and not (a / "workflows").exists()
    assert ok(a, "workflow", "run", "greet")["status"] == "succeeded"
    # b has the same hello.yaml from git: it is already there; b then reads the workflow from the tier.
    joined = ok(b, "datastore", "config", "migrate")
    assert joined["alreadyThere"] == ["models/command/shell/hello.yaml"] and joined["copied"] == []
    assert ok(b, "workflow", "run", "greet")["status"] == "succeeded"


def test_a_repository_copy_that_differs_from_the_tier_stops_migrate_before_anything_changes(proxied):
    proxy, a, b = proxied
    ok(a, "datastore", "config", "migrate")
    (b / "models" / "command" / "shell" / "hello.yaml").write_text(
        "type: command/shell\nname: hello\nglobalArguments: {run: echo mine}\n")
    r = cli(b, "datastore", "config", "migrate")
    assert r.code == 1 and r.error["code"] == "conflict", r
    assert "models/command/shell/hello.yaml" in r.error["error"] and "nothing was migrated" in r.error["error"]
    assert "managedConfig" not in (b / ".swamp.yaml").read_text()
    assert ok(a, "model", "get", "hello")["globalArguments"]["run"] == "echo hi"
    assert ok(b, "datastore", "config", "status")["differs"] == ["models/command/shell/hello.yaml"]

    kept = ok(b, "datastore", "config", "migrate", "--keep-datastore")
    assert kept["managed"] and kept["keptDatastore"] == ["models/command/shell/hello.yaml"]
    assert ok(b, "model", "get", "hello")["globalArguments"]["run"] == "echo hi"


def test_migrate_refuses_a_directory_datastore_and_an_already_managed_repository(tmp_path, seaweedfs):
    local = init_repo(tmp_path / "local")
    r = cli(local, "datastore", "config", "migrate")
    assert r.code == 2 and r.error["code"] == "usage", r
    assert "directory on this machine" in r.error["error"] and "datastore setup" in r.error["hint"]
    plain = cli(local, "datastore", "config", "migrate", json=False)
    assert plain.code == 2 and "Traceback" not in plain.stderr

    a = _managed_peer(tmp_path / "a", s3_setup_args(seaweedfs))
    r = cli(a, "datastore", "config", "migrate")
    assert r.code == 1 and r.error["code"] == "already_managed", r
    assert "config status" in r.error["hint"]


def _hand_edit(repo: Path, name: str, run: str) -> None:
    path = repo / ".swamp" / "models" / "command" / "shell" / f"{name}.yaml"
    path.write_text(path.read_text().replace(path.read_text().split("run: ")[1].splitlines()[0], run))


def test_a_hand_edit_is_published_by_config_publish_and_two_edits_of_one_document_are_a_conflict(
        tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = _managed_peer(tmp_path / "a", setup)
    b = _managed_peer(tmp_path / "b", setup)
    ok(a, "model", "create", "command/shell", "x", "--global-arg", "run=echo x")
    ok(a, "model", "create", "command/shell", "y", "--global-arg", "run=echo y")
    assert _names(b) == ["x", "y"]

    _hand_edit(b, "x", "echo by-hand")
    assert ok(a, "datastore", "config", "publish")["published"] == 0  # nothing changed on a
    assert ok(b, "datastore", "config", "publish")["published"] == 1
    assert ok(a, "model", "get", "x")["globalArguments"]["run"] == "echo by-hand"

    # Both change x by hand; b publishes first: a's publish is a named conflict, a's copy kept aside.
    _hand_edit(a, "x", "echo from-a")
    _hand_edit(b, "x", "echo from-b")
    ok(b, "datastore", "config", "publish")
    r = cli(a, "datastore", "config", "publish")
    assert r.code == 1 and r.error["code"] == "conflict", r
    assert ok(a, "model", "get", "x")["globalArguments"]["run"] == "echo from-b"
    kept = ok(a, "datastore", "conflicts", "list")
    assert [c["path"] for c in kept] == ["models/command/shell/x.yaml"]
    assert "echo from-a" in (a / ".swamp" / kept[0]["copy"]).read_text()
    assert ok(b, "model", "get", "y")["globalArguments"]["run"] == "echo y"  # the other document untouched


def _pin(repo: Path, name: str, version: str) -> None:
    """A lockfile entry written as `extension pull` would (no index needed:
    nothing here installs it)."""
    import json

    path = repo / "extensions" / "lockfile.json"
    doc = json.loads(path.read_text()) if path.is_file() else {"lockfileVersion": 1, "extensions": {}}
    wheel = name.replace("-", "_")
    doc["extensions"][name] = {"version": version, "index": "http://127.0.0.1:9/simple/", "types": [f"{name}/t"],
                               "wheels": [{"project": name, "version": version, "sha256": "0" * 64,
                                           "filename": f"{wheel}-{version}-py3-none-any.whl"}]}
    doc["trustedIndexes"] = {"http://127.0.0.1:9/simple/": True}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def test_migrate_merges_each_checkouts_pins_into_the_shared_lockfile(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a, b, c = (init_repo(tmp_path / n) for n in "abc")
    _pin(a, "ext-one", "1.0")
    _pin(b, "ext-two", "2.0")
    _pin(c, "ext-one", "1.5")  # the same extension at another version
    for repo in (a, b, c):
        ok(repo, "datastore", "setup", *setup)
    assert ok(a, "datastore", "config", "migrate")["lockfile"] == "copied"
    assert ok(b, "datastore", "config", "migrate")["lockfile"] == "merged"
    for repo in (a, b):
        listed = ok(repo, "extension", "list")
        assert listed["lockfile"] == "datastore:extensions/lockfile.json"
        assert [(e["name"], e["version"]) for e in listed["extensions"]] == [("ext-one", "1.0"), ("ext-two", "2.0")]

    r = cli(c, "datastore", "config", "migrate")
    assert r.code == 1 and r.error["code"] == "conflict" and "extension ext-one" in r.error["error"], r
    assert "managedConfig" not in (c / ".swamp.yaml").read_text()
    kept = ok(c, "datastore", "config", "migrate", "--keep-datastore")
    assert kept["keptDatastore"] == ["extensions/lockfile.json (extension ext-one)"]
    assert [(e["name"], e["version"]) for e in ok(c, "extension", "list")["extensions"]] == [
        ("ext-one", "1.0"), ("ext-two", "2.0")]


def test_edit_without_a_terminal_says_how_to_publish_a_hand_edit(tmp_path, seaweedfs):
    a = _managed_peer(tmp_path / "a", s3_setup_args(seaweedfs))
    ok(a, "model", "create", "command/shell", "x", "--global-arg", "run=echo x")
    r = cli(a, "model", "edit", "x")
    assert r.code == 2 and ".swamp/models/command/shell/x.yaml" in r.error["hint"], r
    assert "swamp datastore config publish" in r.error["hint"]


def test_workflows_and_vaults_created_or_deleted_on_one_peer_reach_the_other(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = _managed_peer(tmp_path / "a", setup)
    b = _managed_peer(tmp_path / "b", setup)
    made = ok(a, "workflow", "create", "nightly")
    assert made["path"] == ".swamp/workflows/workflow-nightly.yaml" and made["sync"]["filesPushed"] == 1
    ok(a, "vault", "create", "local_encryption", "ops")
    assert [w["name"] for w in ok(b, "workflow", "search")] == ["nightly"]
    assert [v["name"] for v in ok(b, "vault", "list")] == ["ops"]
    assert ok(b, "workflow", "run", "nightly")["status"] == "succeeded"
    ok(b, "workflow", "delete", "nightly", "-y")
    assert ok(a, "workflow", "search") == []
    assert not (a / "workflows" / "workflow-nightly.yaml").exists()  # never written to the repository


def test_an_edit_that_does_not_validate_is_not_published(tmp_path, seaweedfs):
    setup = s3_setup_args(seaweedfs)
    a = _managed_peer(tmp_path / "a", setup)
    b = _managed_peer(tmp_path / "b", setup)
    ok(a, "model", "create", "command/shell", "x", "--global-arg", "run=echo x")
    script = tmp_path / "editor.sh"
    script.write_text('printf "methods:\\n  nosuch: {arguments: {}}\\n" >> "$1"\n')
    out = on_a_terminal(["model", "edit", "x", "--repo-dir", str(a)], env={"EDITOR": f"sh {script}"})
    assert "INVALID" in out and "nosuch" in out, out
    assert ok(b, "model", "get", "x").get("methods", {}) == {}
    assert not any(e["command"] == "model edit x" for e in ok(b, "datastore", "log", "--limit", "10"))
