"""The demo: a fresh repository with two command/shell models and a workflow
that checks several regions in parallel (forEach), then, in a job that
depends on that one, asserts every region answered and writes a report
built from the data the first job wrote. It runs on the filesystem
datastore and prints the run and the data.

    python -m swamp.demo [PATH] [--force] [--temp]

PATH defaults to ./demo-repo. An existing demo repository is replaced only
with --force; --temp uses a new temporary directory instead."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swamp.repo.context import Repo

PROBE = """\
type: command/shell
name: probe
description: Ask one region how it is doing
inputs:
  properties:
    region: {type: string}
  required: [region]
globalArguments:
  run: "echo ${{ inputs.region }} answered in $(( ${#REGION} * 3 )) ms"
  env:
    REGION: "${{ inputs.region }}"
"""

REPORT = """\
type: command/shell
name: report
description: Write a one-line report
inputs:
  properties:
    summary: {type: string}
  required: [summary]
globalArguments:
  run: "echo 'report: ${{ inputs.summary }}'"
"""

WORKFLOW = """\
name: demo
description: Check every region in parallel, then report what they said
inputs:
  properties:
    regions:
      type: array
      default: [eu-west, us-east, ap-south]
jobs:
  - name: check
    steps:
      - name: "check-${{ self.region }}"
        forEach:
          item: region
          in: "${{ inputs.regions }}"
        task:
          type: model_method
          modelIdOrName: probe
          methodName: execute
          inputs:
            region: "${{ self.region }}"
  - name: report
    dependsOn:
      - job: check
        condition: {type: succeeded}
    steps:
      - name: all-answered
        task:
          type: assert
          expr: "${{ size(data.listVersions('probe', 'result')) == size(inputs.regions) }}"
          message: "only ${{ size(data.listVersions('probe', 'result')) }} regions answered"
      - name: summarize
        dependsOn:
          - step: all-answered
            condition: {type: succeeded}
        task:
          type: model_method
          modelIdOrName: report
          methodName: execute
          inputs:
            summary: "${{ data.listVersions('probe', 'result').map(v, data.version('probe', 'result', v).content.stdout).join('; ') }}"
"""


def prepare(path: Path, force: bool) -> None:
    from swamp.errors import UsageError

    if path.exists() and any(path.iterdir()):
        if not force:
            raise UsageError(f"{path} already exists", hint="pass --force to recreate it, or give another path")
        if not (path / ".swamp.yaml").is_file():
            raise UsageError(f"{path} is not a swamp repository; not deleting it",
                             hint="give the path of a new or empty directory")
        shutil.rmtree(path)
    from swamp.repo.init import init_repo

    init_repo(path)
    shell = path / "models" / "command" / "shell"
    shell.mkdir(parents=True, exist_ok=True)
    (shell / "probe.yaml").write_text(PROBE)
    (shell / "report.yaml").write_text(REPORT)
    (path / "workflows" / "workflow-demo.yaml").write_text(WORKFLOW)


def show(repo: Repo, run) -> None:
    from swamp.cli.output import say, table
    from swamp.app.data import get as get_data, list_names as list_data

    say(f"workflow demo: run {run.id} {run.status} in {run.durationMs} ms\n")
    table([{"job": j.name, "step": s.name, "status": s.status, "detail": s.error or s.skipReason}
           for j, s in run.steps()], ["job", "step", "status", "detail"])
    say("\ndata written:")
    rows = list_data(repo, None)
    table(rows, ["model", "name", "latestVersion"])
    for model in ("probe", "report"):
        say(f"\n{model} result, by version:")
        for version in range(1, next(r["latestVersion"] for r in rows
                                     if r["model"] == model and r["name"] == "result") + 1):
            content = get_data(repo, model, "result", version)["content"]
            say(f"  v{version}: {content['stdout']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m swamp.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default="demo-repo", help="where to create the demo repository")
    ap.add_argument("--force", action="store_true", help="replace an existing demo repository")
    ap.add_argument("--temp", action="store_true", help="use a new temporary directory")
    args = ap.parse_args(argv)
    from swamp.errors import SwampError
    from swamp.util.file_modes import restrict_umask

    restrict_umask()  # an entry point, as the swamp command: nothing it writes is writable by others

    path = Path(tempfile.mkdtemp(prefix="swamp-demo-")) if args.temp else Path(args.path).absolute()
    try:
        prepare(path, args.force)
        from swamp.app import workflows
        from swamp.repo.context import Repo

        repo = Repo.open(path)
        print(f"demo repository: {path}\nrunning: swamp workflow run demo\n")
        run = workflows.run(repo, "demo", {}).run
        show(repo, run)
    except SwampError as e:
        print(f"error: {e.message}" + (f"\nhint: {e.hint}" if e.hint else ""), file=sys.stderr)
        return e.exit_code
    print(f"\nlook around: cd {path} && swamp workflow history demo && swamp data list")
    return 0 if run.status == "succeeded" else 1


if __name__ == "__main__":
    sys.exit(main())
