"""`swamp workflow run --detach`: the run goes on in a background process
of its own and the command prints its id at once.

The parent checks what the run would refuse (so a typo is an error here,
not a run that never starts), chooses the run's id, and hands the child
one JSON document on its stdin: the inputs as data, never as a command
line to parse or evaluate. It waits only until the run's first record
exists (so `history get ID` finds it), or the child ends first, whose
error it then shows. The child is `python -m swamp.cli.detached_run`."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING

from swamp.errors import SwampError

if TYPE_CHECKING:
    from swamp.app.repository import Repo


def start(state, repo: Repo, name: str, inputs: dict, fail_on: str) -> dict:
    from swamp.app.detached_runs import check_startable, started_doc, wait_for_record
    from swamp.cli.remote import _cli_strings, _plain
    from swamp.util.ids import new_id

    wid = check_startable(repo, name, inputs, fail_on)
    run_id = new_id()
    spec = {"root": str(repo.root), "offline": bool(getattr(repo, "offline", False)), "name": name,
            "inputs": _plain(inputs), "cliStrings": _cli_strings(inputs), "failOn": fail_on, "runId": run_id}
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen([sys.executable, "-m", "swamp.cli.detached_run"], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=errors, cwd=str(repo.root),
                                 start_new_session=True)  # a closed terminal does not stop it
        child.stdin.write(json.dumps(spec).encode())
        child.stdin.close()
        run = wait_for_record(repo, wid, run_id, going=lambda: child.poll() is None)
        if run is None and child.poll() is not None:
            errors.seek(0)
            said = errors.read().decode(errors="replace").strip().splitlines()
            raise SwampError(f"the detached run of {name} did not start: {said[-1] if said else 'no output'}",
                             hint=f"run it in the foreground to see why: swamp workflow run {name}")
    return started_doc(name, run_id, run)


def _with_cli_strings(values: dict, paths: list) -> dict:
    """The inputs typed as KEY=VALUE, marked again so that they are coerced
    to their declared type as they would be in the parent."""
    from swamp.util.cli_strings import CliString

    for path in paths:
        node = values
        for k in path[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(path[-1]), str):
            node[path[-1]] = CliString(node[path[-1]])
    return values


def main() -> int:
    from swamp.app import workflows
    from swamp.app.repository import open_repo
    from swamp.cli.state import _refresh_config

    spec = json.loads(sys.stdin.read())
    repo = open_repo(spec["root"], offline=spec["offline"], on_config_read=_refresh_config)
    try:
        result = workflows.run(repo, spec["name"], _with_cli_strings(spec["inputs"], spec["cliStrings"]),
                               fail_on=spec["failOn"], run_id=spec["runId"])
    except SwampError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    return 0 if result.run.status not in ("failed", "cancelled", "interrupted") else 1


if __name__ == "__main__":
    sys.exit(main())
