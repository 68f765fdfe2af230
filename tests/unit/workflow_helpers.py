"""Shared set-up for the workflow tests: a repository with a local model
type whose method records when it ran (to measure concurrency), can fail on
request, and does nothing quickly."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.helpers import init_repo, write_type

WORK_TYPE = '''
    import time

    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        sleep: float = 0
        value: str = ""
        fail: bool = False


    work_type = ModelType("test/work", version="2026.01.01.1", global_arguments=Args,
                          description="Records when it ran")
    work_type.resource("span", lifetime="infinite")


    @work_type.method(description="Sleep, then record the span and the value")
    def work(args, ctx: Context) -> None:
        start = time.time()
        time.sleep(args.sleep)
        ctx.write_resource("span", "span", {"start": start, "end": time.time(), "value": args.value})
        if args.fail:
            raise RuntimeError(f"asked to fail ({args.value})")


    @work_type.method(description="Nothing at all")
    def noop(args, ctx: Context) -> None:
        pass
'''


def make_repo(path: Path, models: int = 6) -> Path:
    repo = init_repo(path)
    write_type(repo, "work.py", WORK_TYPE)
    for i in range(models):
        write_model(repo, f"w{i}")
    return repo


def write_model(repo: Path, name: str, body: str = "") -> None:
    p = repo / "models" / "test" / "work" / f"{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"type: test/work\nname: {name}\n" + textwrap.dedent(body))


def write_shell(repo: Path, name: str, body: str) -> None:
    p = repo / "models" / "command" / "shell" / f"{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(body).lstrip())


def write_workflow(repo: Path, name: str, body: str) -> Path:
    p = repo / "workflows" / f"workflow-{name}.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"name: {name}\n" + textwrap.dedent(body).lstrip())
    return p


def run(repo: Path, name: str, inputs: dict | None = None, **kw):
    """Run a workflow in this process; returns the WorkflowRun."""
    from swamp.app import workflows
    from swamp.repo.context import Repo

    return workflows.run(Repo.open(repo), name, inputs or {}, **kw).run


def resume(repo: Path, name: str, run_id: str | None = None, inputs: dict | None = None):
    from swamp.app import workflows
    from swamp.repo.context import Repo

    return workflows.resume(Repo.open(repo), name, run_id, inputs or {}).run


def decide(repo: Path, name: str, step: str, decision: str = "approved", reason: str | None = None):
    from swamp.app import workflows
    from swamp.repo.context import Repo

    return workflows.decide(Repo.open(repo), name, step, decision, None, reason)


def steps(run) -> dict:
    """{"job/step": StepRun}, in record order."""
    return {f"{j.name}/{s.name}": s for j, s in run.steps()}


def statuses(run) -> dict:
    return {k: s.status for k, s in steps(run).items()}


def spans(repo: Path) -> list[tuple[float, float, str, str, int]]:
    """Every recorded span: (start, end, value, model id, version)."""
    from tests.helpers import visible_versions
    import json

    out = []
    for where, meta, raw in visible_versions(repo):
        if meta["name"] == "span":
            d = json.loads(raw)
            out.append((d["start"], d["end"], d["value"], meta["owner"]["definitionName"], meta["version"]))
    return sorted(out)


def max_overlap(intervals) -> int:
    events = sorted([(s, 1) for s, e, *_ in intervals] + [(e, -1) for s, e, *_ in intervals],
                    key=lambda x: (x[0], x[1]))
    now = best = 0
    for _, d in events:
        now += d
        best = max(best, now)
    return best
