"""`swamp doctor` (issue 15): one entry per check, exit 1 when one fails;
a vault value in clear is found (and never printed); a lease whose holder
died is reported with who and where, and released on --repair (directory
and S3 datastores); a datastore that is down is a failed check with
nothing changed; bad input is a clear error."""

from __future__ import annotations

import subprocess
import textwrap

from tests.fixtures.faultproxy import FaultProxy
from tests.helpers import PYTHON, _env, cli, init_repo, ok, run_hello, snapshot

SECRET = "hunter2-very-secret-value"
FIELDS = {"check", "status", "message", "hint", "repaired"}


def _checks(result) -> dict[str, dict]:
    return {c["check"]: c for c in result["checks"]}


def _put_secret(repo, vault: str, key: str, value: str) -> None:
    from swamp.repo.context import Repo
    from swamp.vault.service import create_vault, put_secret

    r = Repo.open(repo)
    create_vault(r, "local_encryption", vault)
    put_secret(r, vault, key, value)


def _die_holding(repo, lease: str) -> int:
    """A process that takes ``lease`` on the repository's datastore and is
    killed with SIGKILL while holding it; its pid."""
    code = textwrap.dedent(f"""
        import os, signal
        from swamp.repo.context import Repo
        repo = Repo.open({str(repo)!r})
        with repo.datastore.lock({lease!r}):
            print(os.getpid(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert p.returncode == -9, p.stderr
    return int(p.stdout.strip())


def test_a_fresh_repository_is_healthy_and_every_entry_has_the_fields(tmp_path):
    repo = init_repo(tmp_path / "r")
    result = ok(repo, "doctor")
    assert result["ok"] and result["summary"]["fail"] == 0
    names = [c["check"] for c in result["checks"]]
    assert names == sorted(names)
    assert all(set(c) == FIELDS and c["status"] in ("ok", "warn", "fail") for c in result["checks"])
    checks = _checks(result)
    for name in ("datastore.reachable", "datastore.leases", "extensions.lockfile", "vaults", "workflows",
                 "secrets.gitignore", "install.python", "install.packages"):
        assert checks[name]["status"] == "ok", checks[name]
    human = cli(repo, "doctor", json=False)
    assert human.code == 0 and "install.python" in human.stdout and "0 failed" in human.stdout


def test_a_secret_in_clear_is_found_and_never_printed(tmp_path):
    repo = init_repo(tmp_path / "r")
    _put_secret(repo, "prod", "token", SECRET)
    assert ok(repo, "doctor", "secrets")["ok"]
    (repo / "notes.txt").write_text(f"the token is {SECRET}\n")
    leaked = repo / ".swamp" / "data" / "x" / "raw"
    leaked.parent.mkdir(parents=True)
    leaked.write_text(SECRET)
    r = cli(repo, "doctor", "secrets")
    assert r.code == 1 and SECRET not in r.stdout + r.stderr
    check = _checks(r.data)["secrets.clear:prod/token"]
    assert check["status"] == "fail"
    assert "notes.txt" in check["message"] and ".swamp/data/x/raw" in check["message"]
    assert "vault put prod token" in check["hint"]
    human = cli(repo, "doctor", "secrets", json=False)
    assert human.code == 1 and SECRET not in human.stdout and "FAIL" in human.stdout


def test_gitignore_without_swamp_is_repaired(tmp_path):
    repo = init_repo(tmp_path / "r")
    (repo / ".gitignore").write_text("*.pyc\n")
    r = cli(repo, "doctor", "secrets")
    assert r.code == 1 and _checks(r.data)["secrets.gitignore"]["status"] == "fail"
    fixed = ok(repo, "doctor", "secrets", "--repair")
    assert _checks(fixed)["secrets.gitignore"]["repaired"]
    assert ".swamp/" in (repo / ".gitignore").read_text() and "*.pyc" in (repo / ".gitignore").read_text()
    assert _checks(ok(repo, "doctor", "secrets"))["secrets.gitignore"]["repaired"] is None


def test_a_dead_holders_lease_is_named_and_released_on_repair(tmp_path):
    repo = init_repo(tmp_path / "r")
    pid = _die_holding(repo, "model/test/dead")
    result = ok(repo, "doctor", "datastores")  # a warning: exit 0
    check = _checks(result)["datastore.lease:model/test/dead"]
    assert check["status"] == "warn" and f"pid {pid}" in check["message"] and "gone" in check["message"]
    assert "--repair" in check["hint"]
    assert [r["name"] for r in ok(repo, "datastore", "lock", "status")] == ["model/test/dead"]
    fixed = ok(repo, "doctor", "datastores", "--repair")
    assert _checks(fixed)["datastore.lease:model/test/dead"]["repaired"] == "released lease model/test/dead"
    assert ok(repo, "datastore", "lock", "status") == []
    assert "datastore.lease:model/test/dead" not in _checks(ok(repo, "doctor", "datastores"))


def test_shared_datastore_checks_and_a_dead_holder_on_s3(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    ok(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
    ok(repo, "datastore", "setup", "s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
       "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1")
    run_hello(repo, "one")
    checks = _checks(ok(repo, "doctor", "datastores"))
    for name in ("datastore.reachable", "datastore.conditional-writes", "datastore.sync-state",
                 "datastore.unpublished", "datastore.conflicts", "datastore.leases"):
        assert checks[name]["status"] == "ok", checks[name]
    pid = _die_holding(repo, "model/test/dead")
    check = _checks(ok(repo, "doctor", "datastores"))["datastore.lease:model/test/dead"]
    assert check["status"] == "warn" and f"pid {pid}" in check["message"]
    fixed = _checks(ok(repo, "doctor", "datastores", "--repair"))["datastore.lease:model/test/dead"]
    assert fixed["repaired"] == "released lease model/test/dead"
    assert ok(repo, "datastore", "lock", "status") == []
    assert ok(repo, "datastore", "verify")["ok"]
    run_hello(repo, "two")  # the model's lease is free again


def test_a_datastore_that_is_down_is_a_failed_check_and_nothing_changes(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    with FaultProxy(seaweedfs.endpoint_url) as proxy:
        ok(repo, "datastore", "setup", "s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
           "--endpoint-url", proxy.url, "--region", "us-east-1")
    before = snapshot(repo)
    r = cli(repo, "doctor", "datastores", "--repair")
    assert r.code == 1 and "Traceback" not in r.stderr
    check = _checks(r.data)["datastore.reachable"]
    assert check["status"] == "fail" and "not reachable" in check["message"] and check["hint"]
    assert snapshot(repo) == before


def test_an_invalid_workflow_and_a_stray_extension_install(tmp_path):
    repo = init_repo(tmp_path / "r")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-broken.yaml").write_text("name: broken\njobs: []\n")
    stray = repo / ".swamp" / "cache" / "extensions" / "gone-1.0.0"
    stray.mkdir(parents=True)
    (stray / "x.py").write_text("")
    r = cli(repo, "doctor", "workflows", "extensions")
    assert r.code == 1
    checks = _checks(r.data)
    assert checks["workflows.broken"]["status"] == "fail" and "workflow-broken.yaml" in checks["workflows.broken"]["message"]
    assert checks["extensions.installs"]["status"] == "warn" and "gone-1.0.0" in checks["extensions.installs"]["message"]
    fixed = cli(repo, "doctor", "extensions", "--repair")
    assert fixed.code == 0 and "gone-1.0.0" in _checks(fixed.data)["extensions.installs"]["repaired"]
    assert not stray.exists()


def test_bad_input_and_no_repository(tmp_path):
    repo = init_repo(tmp_path / "r")
    r = cli(repo, "doctor", "vault")
    assert r.code == 2 and r.error["code"] == "usage" and "vaults" in r.error["hint"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli(None, "doctor", "install", cwd=empty).code == 0
    r = cli(None, "doctor", "vaults", cwd=empty)
    assert r.code == 1 and _checks(r.data)["vaults"]["status"] == "fail"
    assert "repo init" in _checks(r.data)["vaults"]["hint"]


def test_a_namespace_changed_by_hand_is_a_failed_sync_state_check(tmp_path, seaweedfs):
    repo = init_repo(tmp_path / "r")
    ok(repo, "datastore", "setup", "s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
       "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1", "--namespace", "one")
    assert _checks(ok(repo, "doctor", "datastores"))["datastore.sync-state"]["status"] == "ok"
    config = repo / ".swamp.yaml"
    config.write_text(config.read_text().replace("namespace: one", "namespace: two"))
    r = cli(repo, "doctor", "datastores")
    assert r.code == 1
    check = _checks(r.data)["datastore.sync-state"]
    assert check["status"] == "fail" and "another remote" in check["message"]
    assert "namespace set" in check["hint"]


def _wheel_with_record(dest, files: dict[str, bytes]):
    """A pure-Python wheel of ext-one 1.0 whose RECORD lists each file's hash."""
    import base64
    import hashlib
    import zipfile

    dist = "ext_one-1.0.dist-info"
    files = {**files, f"{dist}/METADATA": b"Metadata-Version: 2.1\nName: ext-one\nVersion: 1.0\n",
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},"
                     f"{len(b)}\n" for p, b in files.items()) + f"{dist}/RECORD,,\n"
    path = dest / "ext_one-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, b in files.items():
            z.writestr(p, b)
        z.writestr(f"{dist}/RECORD", record)
    return path


def test_an_altered_extension_install_fails_and_is_removed_on_repair(tmp_path):
    from swamp.extensions import install, lockfile
    from swamp.extensions.index import Index, sha256_of
    from swamp.extensions.lockfile import Entry, Lockfile, Wheel
    from swamp.repo.context import Repo

    repo = init_repo(tmp_path / "r")
    wheel = _wheel_with_record(tmp_path, {"ext_one/__init__.py": b"VALUE = 1\n"})
    entry = Entry(version="1.0", index=Index(str(tmp_path)).url,
                  wheels=[Wheel(project="ext-one", version="1.0", filename=wheel.name, sha256=sha256_of(wheel))],
                  types=["acme/one"])
    r = Repo.open(repo)
    lockfile.write(r, Lockfile(extensions={"ext-one": entry}))
    assert "not installed here yet" in _checks(ok(repo, "doctor", "extensions"))["extensions.ext-one"]["message"]
    target = install.ensure(r, "ext-one", entry)
    check = _checks(ok(repo, "doctor", "extensions"))["extensions.ext-one"]
    assert check["status"] == "ok" and "RECORD" in check["message"]

    (target / "ext_one" / "__init__.py").write_text("VALUE = 2  # changed after install\n")
    res = cli(repo, "doctor", "extensions")
    assert res.code == 1
    check = _checks(res.data)["extensions.ext-one"]
    assert check["status"] == "fail" and "ext_one/__init__.py" in check["message"] and "--repair" in check["hint"]
    fixed = _checks(ok(repo, "doctor", "extensions", "--repair"))["extensions.ext-one"]
    assert fixed["repaired"] and not target.exists()
