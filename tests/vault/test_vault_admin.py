"""`swamp vault` administration through the CLI, on local_encryption vaults:
search, describe, validate, edit, put, annotate, inspect, read-secret,
audit-trail, migrate, type search; bad input refused with nothing changed;
no secret in any output, audit trail or log."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.helpers import assert_secrets_nowhere, REPO_ROOT, cli, init_repo, on_a_terminal, snapshot, write_shell, write_workflow

SECRET = "tok-3f9a-very-secret-value"
OTHER = "db-pa55-another-secret"

USES_SECRET = """
type: command/shell
name: secretive
globalArguments:
  run: 'test -n "$TOKEN" && echo "got $TOKEN"'
  env:
    TOKEN: "${{ vault.get('prod', 'api.token') }}"
"""

WORKFLOW = """
jobs:
  - name: main
    steps:
      - name: use-secret
        task:
          type: model_method
          modelIdOrName: secretive
          methodName: execute
"""


def ok(repo, *args, **kw):
    r = cli(repo, *args, **kw)
    assert r.code == 0, r
    return r


def no_secret_anywhere(repo: Path, *results) -> None:
    assert_secrets_nowhere(repo, (SECRET, OTHER), *results)


@pytest.fixture
def repo(tmp_path):
    r = init_repo(tmp_path / "repo")
    ok(r, "vault", "create", "local_encryption", "prod")
    ok(r, "vault", "create", "local_encryption", "staging")
    ok(r, "vault", "put", "prod", "api.token", input=SECRET + "\n")
    ok(r, "vault", "put", "prod", "DB_PASS", input=OTHER)
    return r


def test_search_describe_and_type_search(repo):
    assert [v["name"] for v in ok(repo, "vault", "search").data] == ["prod", "staging"]
    assert [v["name"] for v in ok(repo, "vault", "search", "STAG").data] == ["staging"]
    assert ok(repo, "vault", "search", "nothing-like-it").data == []
    d = ok(repo, "vault", "describe", "prod").data
    assert d["type"] == "local_encryption" and d["path"] == "vaults/local_encryption/prod.yaml"
    assert d["reachable"] is True and d["keys"] == ["DB_PASS", "api.token"] and d["keyCount"] == 2
    human = ok(repo, "vault", "describe", "prod", json=False)
    assert "keys (2): DB_PASS, api.token" in human.stdout
    types = ok(repo, "vault", "type", "search").data["types"]
    assert [t["type"] for t in types] == ["aws_secrets_manager", "local_encryption"]
    aws = ok(repo, "vault", "type", "search", "aws").data["types"]
    assert [t["type"] for t in aws] == ["aws_secrets_manager"]
    assert "region" in [s["name"] for s in aws[0]["settings"]]
    assert ok(repo, "vault", "validate").data["valid"] is True


def test_put_warns_about_shell_history_only_for_a_value_on_the_command_line(repo):
    given = ok(repo, "vault", "put", "staging", "k1", "value-on-the-line", json=False)
    assert "warning:" in given.stderr and "shell history" in given.stderr
    assert "value-on-the-line" not in given.stdout + given.stderr
    as_json = ok(repo, "vault", "put", "staging", "k2", "value-on-the-line")
    assert as_json.stderr == "" and "shell history" in as_json.data["warnings"][0]
    piped = ok(repo, "vault", "put", "staging", "k3", input="from-stdin-value\n", json=False)
    assert piped.stderr == "" and "warning" not in piped.stdout
    assert ok(repo, "vault", "get", "staging", "k3").data["value"] == "from-stdin-value"


def test_put_on_a_terminal_asks_with_a_hidden_prompt(repo, tmp_path):
    shown = on_a_terminal(["vault", "put", "staging", "typed", "--repo-dir", str(repo)],
                          answer=b"typed-secret-value\r", prompt=b"Value:")
    assert "Value:" in shown, shown  # asked, and answered
    assert "typed-secret-value" not in shown  # not echoed
    assert "Stored typed in vault staging" in shown
    assert ok(repo, "vault", "get", "staging", "typed").data["value"] == "typed-secret-value"


def test_annotate_and_inspect_never_show_the_value(repo):
    r1 = ok(repo, "vault", "annotate", "prod", "api.token", "rotate every 90 days; owner: ops")
    assert r1.data["notes"] == 1
    ok(repo, "vault", "annotate", "prod", "api.token", "issued by the payments team")
    info = ok(repo, "vault", "inspect", "prod", "api.token")
    d = info.data
    assert d["key"] == "api.token" and d["type"] == "local_encryption"
    assert d["createdAt"] and d["updatedAt"] and "@" in d["createdBy"] and "@" in d["updatedBy"]
    assert d["lengthClass"].startswith("medium")
    assert [n["note"] for n in d["notes"]] == ["rotate every 90 days; owner: ops", "issued by the payments team"]
    human = ok(repo, "vault", "inspect", "prod", "api.token", json=False)
    assert "rotate every 90 days" in human.stdout and "medium" in human.stdout
    ok(repo, "vault", "put", "prod", "api.token", input="x" * 300)
    after = ok(repo, "vault", "inspect", "prod", "api.token").data
    assert after["lengthClass"].startswith("very long") and after["createdAt"] == d["createdAt"]
    assert len(after["notes"]) == 2  # notes survive a new value
    no_secret_anywhere(repo, r1, info, human)


def test_read_secret_prints_only_with_reveal(repo):
    refused = cli(repo, "vault", "read-secret", "prod", "api.token")
    assert refused.code == 2 and refused.error["code"] == "usage" and "--reveal" in refused.error["hint"]
    assert SECRET not in refused.stdout + refused.stderr
    trail = ok(repo, "vault", "audit-trail", "prod", "--key", "api.token").data["events"]
    assert [e["op"] for e in trail] == ["put"]  # the refusal read nothing
    shown = ok(repo, "vault", "read-secret", "prod", "api.token", "--reveal", json=False)
    assert shown.stdout == SECRET  # exactly the value, for $(...)
    as_json = ok(repo, "vault", "read-secret", "prod", "api.token", "--reveal").data
    assert as_json == {"vault": "prod", "key": "api.token", "value": SECRET}
    trail = ok(repo, "vault", "audit-trail", "prod", "--key", "api.token").data["events"]
    assert [(e["op"], e["via"]) for e in trail][-2:] == [("read", "vault read-secret")] * 2


def test_audit_trail_records_reads_by_method_and_workflow_runs_without_values(repo):
    write_shell(repo, "secretive", USES_SECRET)
    write_workflow(repo, "deploy", WORKFLOW)
    run = ok(repo, "model", "method", "run", "secretive", "execute")
    logs = ok(repo, "data", "get", "secretive", "result")
    assert logs.data["content"]["stdout"] == "got ***"
    wf = ok(repo, "workflow", "run", "deploy")
    ok(repo, "vault", "delete", "prod", "DB_PASS", "-y")
    result = ok(repo, "vault", "audit-trail", "prod")
    events = result.data["events"]
    ops = [(e["op"], e.get("key"), e["via"]) for e in events]
    assert ("read", "api.token", "model method run secretive execute") in ops
    assert ("read", "api.token", "workflow run deploy") in ops
    assert ("delete", "DB_PASS", "vault delete") in ops
    assert [e["op"] for e in events][:3] == ["create", "put", "put"]
    assert all("@" in e["by"] and e["at"] for e in events)
    assert [e["at"] for e in events] == sorted(e["at"] for e in events)
    only_key = ok(repo, "vault", "audit-trail", "--key", "DB_PASS").data["events"]
    assert [e["op"] for e in only_key] == ["put", "delete"]
    assert len(ok(repo, "vault", "audit-trail", "prod", "--limit", "2").data["events"]) == 2
    human = ok(repo, "vault", "audit-trail", json=False)
    assert "model method run secretive execute" in human.stdout
    no_secret_anywhere(repo, run, logs, wf, result, human)


def test_migrate_copies_verifies_then_removes_from_the_source(repo):
    ok(repo, "vault", "annotate", "prod", "api.token", "owner: ops")
    moved = ok(repo, "vault", "migrate", "prod", "staging", "--keys", "api.token,DB_PASS")
    assert moved.data == {"from": "prod", "to": "staging", "moved": ["DB_PASS", "api.token"],
                          "verified": ["DB_PASS", "api.token"], "removedFromSource": ["DB_PASS", "api.token"]}
    assert ok(repo, "vault", "list-keys", "prod").data["keys"] == []
    assert ok(repo, "vault", "get", "staging", "api.token").data["value"] == SECRET
    assert ok(repo, "vault", "get", "staging", "DB_PASS").data["value"] == OTHER
    assert [n["note"] for n in ok(repo, "vault", "inspect", "staging", "api.token").data["notes"]] == ["owner: ops"]
    trail = ok(repo, "vault", "audit-trail", "staging", "--key", "api.token").data["events"]
    assert [e["op"] for e in trail if e["op"].startswith("migrate")] == ["migrate-in", "migrate-out"]
    # all keys by default; nothing to move is not an error
    assert ok(repo, "vault", "migrate", "staging", "prod").data["moved"] == ["DB_PASS", "api.token"]
    assert ok(repo, "vault", "migrate", "staging", "prod").data["moved"] == []
    no_secret_anywhere(repo, moved)


def test_migrate_failing_midway_loses_nothing(repo):
    # The destination cannot take DB_PASS's ciphertext (a directory stands
    # where the file goes): the copy of the key before it is taken back and
    # the source keeps both.
    ok(repo, "vault", "put", "prod", "zz.last", input="third-secret-value")
    (repo / ".swamp/secrets/local_encryption/staging/api.token.enc").mkdir(parents=True)
    before = {k: ok(repo, "vault", "get", "prod", k).data["value"] for k in ("DB_PASS", "api.token", "zz.last")}
    failed = cli(repo, "vault", "migrate", "prod", "staging")
    assert failed.code == 1, failed
    err = failed.error
    assert err["code"] == "vault_migrate" and "api.token" in err["error"]
    assert "Nothing was removed from 'prod'" in err["error"] and "DB_PASS" in err["error"]
    after = {k: ok(repo, "vault", "get", "prod", k).data["value"] for k in ("DB_PASS", "api.token", "zz.last")}
    assert after == before
    assert ok(repo, "vault", "list-keys", "staging").data["keys"] == ["api.token"]  # only the obstacle
    assert cli(repo, "vault", "get", "staging", "DB_PASS").error["code"] == "not_found"
    no_secret_anywhere(repo, failed)


def test_migrate_refuses_before_writing_anything(repo):
    ok(repo, "vault", "put", "staging", "DB_PASS", input="already-there")
    before = snapshot(repo)
    clash = cli(repo, "vault", "migrate", "prod", "staging")
    assert clash.code == 1 and clash.error["code"] == "conflict" and "DB_PASS" in clash.error["error"]
    missing = cli(repo, "vault", "migrate", "prod", "staging", "--keys", "api.tokn")
    assert missing.code == 1 and missing.error["code"] == "not_found" and "api.token" in missing.error["hint"]
    itself = cli(repo, "vault", "migrate", "prod", "prod")
    assert itself.code == 1 and itself.error["code"] == "validation"
    unknown = cli(repo, "vault", "migrate", "prod", "nowhere")
    assert unknown.code == 1 and unknown.error["code"] == "not_found"
    assert snapshot(repo) == before


@pytest.mark.parametrize("args", [
    ("describe", "prd"), ("edit", "prd"), ("inspect", "prd", "api.token"), ("annotate", "prd", "api.token", "n"),
    ("read-secret", "prd", "api.token", "--reveal"), ("audit-trail", "prd"), ("put", "prd", "k", "v"),
    ("validate", "prd"), ("migrate", "prd", "staging"),
])
def test_unknown_vault_is_a_clear_error_and_changes_nothing(repo, args):
    before = snapshot(repo)
    r = cli(repo, "vault", *args)
    assert r.code == 1, r
    assert r.error["code"] == "not_found" and "'prd'" in r.error["error"] and "prod" in r.error.get("hint", "")
    assert "Traceback" not in r.stderr
    assert snapshot(repo) == before


@pytest.mark.parametrize("args", [("inspect", "prod", "api.tokn"), ("annotate", "prod", "api.tokn", "n"),
                                  ("read-secret", "prod", "api.tokn", "--reveal")])
def test_unknown_key_is_a_clear_error_and_changes_nothing(repo, args):
    before = snapshot(repo)
    r = cli(repo, "vault", *args)
    assert r.code == 1 and r.error["code"] == "not_found" and "api.tokn" in r.error["error"], r
    assert snapshot(repo) == before


def test_bad_input(repo):
    before = snapshot(repo)
    for args, code in [(("annotate", "prod", "api.token", " "), "validation"),
                       (("annotate", "prod", "api.token", "x" * 501), "validation"),
                       (("inspect", "prod", "../x"), "validation"),
                       (("audit-trail", "prod", "--limit", "0"), "validation"),
                       (("create", "local_encryption", "other", "--set", "nothing"), "usage"),
                       (("create", "local_encryption", "other", "--set", "a=b"), "validation"),
                       (("create", "aws_secrets_manager", "other", "--set", "recovery_window_days=3"), "validation"),
                       (("create", "hashicorp", "other"), "validation")]:
        r = cli(repo, "vault", *args)
        assert r.code in (1, 2) and r.error["code"] == code, (args, r)
    assert snapshot(repo) == before


def test_a_missing_or_broken_config_file(repo):
    (repo / "vaults/local_encryption/staging.yaml").write_text("name: staging\ntype: [\n")
    broken = cli(repo, "vault", "describe", "staging")
    assert broken.code == 1 and "staging.yaml" in broken.error["error"], broken
    report = cli(repo, "vault", "validate")
    assert report.code == 1
    assert {v["name"]: v["valid"] for v in report.data["vaults"]} == {"prod": True, "staging": False}
    (repo / "vaults/local_encryption/prod.yaml").unlink()
    gone = cli(repo, "vault", "inspect", "prod", "api.token")
    assert gone.code == 1 and gone.error["code"] == "not_found"
    # its trail is still there
    assert [e["op"] for e in ok(repo, "vault", "audit-trail", "prod").data["events"]] == ["create", "put", "put"]


def test_edit_opens_the_config_on_a_terminal_then_checks_it(repo, tmp_path):
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'settings:\\n  colour: blue\\n' >> \"$1\"\n")
    editor.chmod(0o755)
    shown = on_a_terminal(["vault", "edit", "staging", "--repo-dir", str(repo)], env={"EDITOR": str(editor)})
    assert "INVALID staging" in shown and "colour" in shown
    assert "colour: blue" in (repo / "vaults/local_encryption/staging.yaml").read_text()
    no_tty = cli(repo, "vault", "edit", "staging", json=False)
    assert no_tty.code == 2 and "needs a terminal" in no_tty.stderr and "vault validate staging" in no_tty.stderr


def test_vault_commands_work_while_the_datastore_is_down(tmp_path, seaweedfs):
    """Vaults are not in the datastore: with the shared datastore
    unreachable, administering them still works, and a method run that would
    read a secret fails on the datastore before reading it."""
    from tests.fixtures.faultproxy import FaultProxy

    r = init_repo(tmp_path / "r")
    with FaultProxy(seaweedfs.endpoint_url) as proxy:
        ok(r, "datastore", "setup", "s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
           "--endpoint-url", proxy.url, "--region", "us-east-1")
    # the proxy is gone: every datastore request is refused
    ok(r, "vault", "create", "local_encryption", "prod")
    ok(r, "vault", "put", "prod", "api.token", input=SECRET)
    ok(r, "vault", "annotate", "prod", "api.token", "works offline")
    assert ok(r, "vault", "inspect", "prod", "api.token").data["notes"][0]["note"] == "works offline"
    assert ok(r, "vault", "describe", "prod").data["keys"] == ["api.token"]
    write_shell(r, "secretive", USES_SECRET)
    run = cli(r, "model", "method", "run", "secretive", "execute", env={"SWAMP_LOCK_TIMEOUT_MS": "3000"})
    assert run.code != 0 and "Traceback" not in run.stderr, run
    reads = [e for e in ok(r, "vault", "audit-trail", "prod").data["events"] if e["op"] == "read"]
    assert reads == []
    no_secret_anywhere(r, run)


EXTENSION = '''
    """A vault type from a package: secrets in a JSON file named by a setting."""
    import json
    from pathlib import Path

    from swamp.errors import NotFoundError
    from swamp.vault.types import Setting, VaultType


    class FileVault:
        def __init__(self, name, path):
            self.name, self.path = name, Path(path)

        def _doc(self):
            return json.loads(self.path.read_text()) if self.path.exists() else {"values": {}, "meta": {}}

        def _save(self, doc):
            self.path.write_text(json.dumps(doc))

        def create(self): self._save(self._doc())
        def check(self): self._doc()
        def location(self): return str(self.path)

        def put(self, key, value):
            doc = self._doc(); existed = key in doc["values"]; doc["values"][key] = value; self._save(doc)
            return existed

        def get(self, key):
            try:
                return self._doc()["values"][key]
            except KeyError:
                raise NotFoundError(f"no secret {key!r}") from None

        def exists(self, key): return key in self._doc()["values"]
        def list_keys(self): return sorted(self._doc()["values"])

        def delete(self, key):
            doc = self._doc(); doc["values"].pop(key); doc["meta"].pop(key, None); self._save(doc)

        def read_meta(self, key): return self._doc()["meta"].get(key, {})

        def write_meta(self, key, meta):
            doc = self._doc(); doc["meta"][key] = meta; self._save(doc)


    class JsonFileType(VaultType):
        name = "json_file"
        description = "Secrets in a JSON file (an example extension)"
        settings = (Setting("path", "the file", required=True),)

        def open(self, name, settings, secrets_dir):
            return FileVault(name, settings["path"])
'''


def test_an_extension_adds_a_vault_type_through_its_entry_point(repo, tmp_path):
    site = tmp_path / "site"
    (site / "acme_vault").mkdir(parents=True)
    (site / "acme_vault" / "__init__.py").write_text(textwrap.dedent(EXTENSION))
    dist = site / "acme_vault-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-vault\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[swamp.vault_types]\njson_file = acme_vault:JsonFileType\n")
    env = {"PYTHONPATH": f"{REPO_ROOT / 'src'}{os.pathsep}{site}"}
    types = ok(repo, "vault", "type", "search", "json", env=env).data["types"]
    assert [(t["type"], t["source"]) for t in types] == [("json_file", "extension acme-vault 1.0")]
    missing = cli(repo, "vault", "create", "json_file", "files", env=env)
    assert missing.code == 1 and "path" in missing.error["error"]
    store = tmp_path / "store.json"
    ok(repo, "vault", "create", "json_file", "files", "--set", f"path={store}", env=env)
    ok(repo, "vault", "migrate", "prod", "files", "--keys", "DB_PASS", env=env)
    assert json.loads(store.read_text())["values"] == {"DB_PASS": OTHER}
    assert ok(repo, "vault", "inspect", "files", "DB_PASS", env=env).data["createdAt"]
    # without the package the type is unknown, and says so
    gone = cli(repo, "vault", "describe", "files")
    assert gone.code == 1 and gone.error["code"] == "validation" and "json_file" in gone.error["error"]


def test_a_read_that_cannot_be_audited_shows_nothing(repo):
    log = repo / ".swamp/secrets/audit.jsonl"
    log.rename(repo / "audit.saved")
    log.mkdir()  # nothing can be appended to it
    r = cli(repo, "vault", "read-secret", "prod", "api.token", "--reveal", json=False)
    assert r.code == 1 and SECRET not in r.stdout + r.stderr, r
    assert "audit log" in r.stderr and "Traceback" not in r.stderr
