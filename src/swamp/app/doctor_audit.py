"""``swamp doctor audit`` (upstream's name): is what records who did what
here, and what an AI tool working in the repository relies on, healthy?
The same result shape as ``swamp doctor`` (``{ok, summary, checks}``),
read-only, each check with a hint when it is not ok:

- ``audit:agent-instructions``: the tool's instructions file (AGENTS.md and
  the tool's own pointer file, ``swamp agent setup``) is there with swamp's
  region, current or at least swamp's own text;
- ``audit:swamp-on-path``: ``swamp`` on PATH is this installation (an agent
  runs the swamp it finds there);
- ``audit:vault-audit-log``: ``.swamp/secrets/audit.jsonl`` (who read which
  secret) is private to its owner, appendable, and every line reads;
- ``audit:serve-audit-log``: the audit log of ``swamp serve`` (every
  request) is not writable by others and every line reads.

The tool is ``--tool`` (an agent of ``swamp agent list``, upstream's
``opencode`` meaning AGENTS.md, or ``none``), else the agents whose file
swamp wrote here, else those this user seems to have."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from swamp.app.doctor import Check
from swamp.errors import UsageError

#: upstream's tool names that are one of ours under another name
TOOL_ALIASES = {"opencode": "agents", "codex": "codex"}


#: where `swamp serve` keeps its audit log by default (serve/audit.default_path, a layer above)
SERVE_AUDIT = ("cache", "serve", "audit.jsonl")


def run(repo, tool: str | None = None) -> dict:
    tools = _tools(repo.root, tool)
    checks = [*(_instructions(repo.root, t) for t in tools), _swamp_on_path(),
              _log("audit:vault-audit-log", repo.secrets_dir / "audit.jsonl", private=True),
              _log("audit:serve-audit-log", repo.local_dir.joinpath(*SERVE_AUDIT), private=False)]
    if not tools:
        checks.append(Check("audit:agent-instructions", "ok", "no AI tool is set up here (--tool none)"))
    checks.sort(key=lambda c: c.check)
    summary = {s: sum(c.status == s for c in checks) for s in ("ok", "warn", "fail")}
    return {"ok": summary["fail"] == 0, "summary": summary, "checks": [c.to_json() for c in checks]}


def _tools(root: Path, tool: str | None) -> list[str]:
    from swamp.repo import agents

    if tool is not None:
        name = TOOL_ALIASES.get(tool.strip().lower(), tool.strip().lower())
        if name == "none":
            return []
        if name not in agents.AGENTS:
            raise UsageError(f"unknown tool {tool!r}",
                             hint=f"one of: {', '.join(sorted(agents.AGENTS))}, opencode (AGENTS.md), or none")
        return [name]
    return agents.agents_present(root) or agents.detect(root) or ["agents"]


def _instructions(root: Path, tool: str) -> Check:
    from swamp.repo import agents

    a = agents.AGENTS[tool]
    name = f"audit:agent-instructions:{tool}"
    for rel, agent in (("AGENTS.md", None), *(((a.path, a),) if a.path else ())):
        change = agents.plan_file(root, rel, agent)
        if change.action == "create":
            return Check(name, "fail", f"{rel} is missing: {a.title} has no swamp instructions here",
                         f"run 'swamp agent setup --agent {tool}'")
        if change.action == "ask":
            return Check(name, "warn", f"{rel} has edited (or no) swamp instructions",
                         f"'swamp agent setup --agent {tool} --force' shows the difference and asks first")
        if change.action == "update":
            return Check(name, "warn", f"{rel} has an older version of swamp's instructions",
                         "run 'swamp repo upgrade' (or 'swamp agent setup') to refresh it")
    return Check(name, "ok", f"{a.title}: swamp's instructions are current")


def _swamp_on_path() -> Check:
    import swamp

    found = shutil.which("swamp")
    if found is None:
        return Check("audit:swamp-on-path", "fail", "no 'swamp' on PATH: an AI tool cannot run it",
                     f"add {Path(sys.executable).parent} to PATH")
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return Check("audit:swamp-on-path", "fail", f"{found} does not run: {e}", "reinstall swamp")
    if swamp.__version__ not in out.split():
        return Check("audit:swamp-on-path", "warn",
                     f"{found} is swamp {out.strip() or '?'}, not this one ({swamp.__version__})",
                     f"put {Path(sys.executable).parent} first on PATH, or upgrade that installation")
    return Check("audit:swamp-on-path", "ok", f"{found} (swamp {swamp.__version__})")


def _log(name: str, path: Path, *, private: bool) -> Check:
    if not path.exists():
        return Check(name, "ok", f"{path}: nothing recorded yet")
    mode = stat.S_IMODE(path.stat().st_mode)
    if private and mode & 0o077:
        return Check(name, "fail", f"{path} can be read by other users of this machine (mode {mode:o})",
                     f"chmod 600 {path}")
    if mode & 0o022:
        return Check(name, "fail", f"{path} can be changed by other users of this machine (mode {mode:o}): "
                                   "its record cannot be trusted", f"chmod go-w {path}")
    if not os.access(path, os.W_OK):
        return Check(name, "fail", f"{path} is not writable by you: what it records would fail",
                     f"check the owner of {path}")
    bad, lines = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            lines += 1
            try:
                ok = isinstance(json.loads(line), dict)
            except ValueError:
                ok = False
            if not ok:
                bad.append(number)
    if bad:
        return Check(name, "warn", f"{path}: {len(bad)} of {lines} line(s) do not read "
                                   f"(line {', '.join(map(str, bad[:5]))}{', ...' if len(bad) > 5 else ''})",
                     "a line cut by a full disk or an edit: keep a copy, and remove those lines")
    return Check(name, "ok", f"{path}: {lines} event(s), private" if private else f"{path}: {lines} event(s)")
