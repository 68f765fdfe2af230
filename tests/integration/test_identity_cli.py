"""Who did it from the CLI, in a real `swamp` process whose environment has
neither $USER nor $LOGNAME (cron, a container, a systemd unit): a method
run, a workflow run, its approval and a cancel record the OS account as
``user:ACCOUNT@HOST``, never ``unknown``."""

from __future__ import annotations

import json
import os
import pwd
import subprocess

from swamp.util.ids import hostname
from tests.helpers import PYTHON, REPO_ROOT, _env, cli, init_repo, write_workflow

GATED = """
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo first"}}
      - name: gate
        dependsOn: [{step: first}]
        task: {type: manual_approval, prompt: "go on?"}
"""


def _bare(repo, *args) -> dict:
    """`swamp ARGS --json` with no USER, LOGNAME or USERNAME in its environment."""
    env = _env()
    for var in ("USER", "LOGNAME", "USERNAME"):
        env.pop(var, None)
    p = subprocess.run([PYTHON, "-m", "swamp", *args, "--json", "--repo-dir", str(repo)], capture_output=True,
                       text=True, env=env, cwd=REPO_ROOT, timeout=60)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return json.loads(p.stdout)


def test_the_cli_without_user_or_logname_records_the_os_account(tmp_path):
    me = f"user:{pwd.getpwuid(os.getuid()).pw_name}@{hostname()}"
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello").code == 0
    write_workflow(repo, "gated", GATED)

    ran = _bare(repo, "model", "method", "run", "hello", "execute")
    assert ran["initiatedBy"] == me
    run = _bare(repo, "workflow", "run", "gated")
    assert run["status"] == "suspended" and run["initiatedBy"] == me
    decided = _bare(repo, "workflow", "approve", "gated", "gate")
    assert decided["decidedBy"] == me
    second = _bare(repo, "workflow", "run", "gated")
    assert _bare(repo, "workflow", "cancel", "gated", "--run", second["id"])["status"] == "cancelled"
    cancelled = _bare(repo, "workflow", "history", "get", second["id"])
    assert cancelled["cancelledBy"] == me and cancelled["initiatedBy"] == me
    everything = json.dumps(_bare(repo, "run", "history")) + json.dumps(_bare(repo, "workflow", "history", "get",
                                                                              run["id"]))
    assert "unknown" not in everything
