"""`swamp doctor audit` (upstream's name, issue 26): the audit logs swamp
keeps (the vault's: who read which secret; serve's: every request) and an
AI tool's swamp instructions, checked read-only; exit 1 on a failed check.
A log others can read or change fails, naming the fix."""

from __future__ import annotations

import os

from tests.helpers import init_repo, invoke


def _checks(r) -> dict:
    return {c["check"]: c for c in r.data["checks"]}


def test_a_healthy_repository_passes_and_each_problem_is_named(tmp_path, monkeypatch):
    repo = init_repo(tmp_path / "r")
    monkeypatch.setenv("PATH", os.path.dirname(__import__("sys").executable) + os.pathsep + os.environ["PATH"])
    assert invoke(repo, "agent", "setup", "--agent", "claude", "--yes").code == 0
    assert invoke(repo, "vault", "create", "local_encryption", "main").code == 0
    assert invoke(repo, "vault", "put", "main", "k", input="a-value-123").code == 0
    r = invoke(repo, "doctor", "audit", "--tool", "claude")
    assert r.code == 0, r
    checks = _checks(r)
    assert checks["audit:agent-instructions:claude"]["status"] == "ok"
    assert checks["audit:vault-audit-log"]["status"] == "ok" and "event(s), private" in \
        checks["audit:vault-audit-log"]["message"]
    assert checks["audit:swamp-on-path"]["status"] == "ok"

    log = repo / ".swamp" / "secrets" / "audit.jsonl"
    os.chmod(log, 0o644)  # readable by every user of the machine
    with open(log, "a") as f:
        f.write("{cut off\n")
    (repo / "CLAUDE.md").unlink()
    r = invoke(repo, "doctor", "audit", "--tool", "claude")
    assert r.code == 1
    checks = _checks(r)
    assert checks["audit:vault-audit-log"]["status"] == "fail" and checks["audit:vault-audit-log"]["hint"] == \
        f"chmod 600 {log}"
    assert checks["audit:agent-instructions:claude"]["status"] == "fail"
    assert "swamp agent setup --agent claude" in checks["audit:agent-instructions:claude"]["hint"]
    os.chmod(log, 0o600)
    r = invoke(repo, "doctor", "audit", "--tool", "none")
    checks = _checks(r)
    assert checks["audit:vault-audit-log"]["status"] == "warn" and "do not read" in \
        checks["audit:vault-audit-log"]["message"]
    assert checks["audit:agent-instructions"]["status"] == "ok"


def test_a_serve_audit_log_others_can_change_is_not_trusted(tmp_path):
    repo = init_repo(tmp_path / "r")
    log = repo / ".swamp" / "cache" / "serve" / "audit.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text('{"at": "2026-01-01T00:00:00Z"}\n')
    os.chmod(log, 0o666)
    r = invoke(repo, "doctor", "audit", "--tool", "none")
    assert r.code == 1 and _checks(r)["audit:serve-audit-log"]["status"] == "fail"


def test_doctor_audit_refuses_what_it_does_not_take(tmp_path):
    repo = init_repo(tmp_path / "r")
    unknown = invoke(repo, "doctor", "audit", "--tool", "kiro")
    assert unknown.code != 0 and unknown.error["code"] == "usage" and "opencode" in unknown.error["hint"]
    mixed = invoke(repo, "doctor", "audit", "datastores")
    assert mixed.code != 0 and "runs alone" in mixed.error["error"]
    remote = invoke(repo, "doctor", "audit", "--server", "http://127.0.0.1:9")
    assert remote.code == 2 and "runs only locally" in remote.error["error"]
