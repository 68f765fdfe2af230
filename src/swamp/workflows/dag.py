"""The two DAGs of a workflow (jobs, and the steps of each job): structural
checks and the deterministic order they run in. Pure functions of the
workflow: no I/O, no expressions."""

from __future__ import annotations

from typing import Iterable, Sequence

from swamp.util.names import did_you_mean
from swamp.util.problems import Problem
from swamp.workflows.schema import Workflow


def levels(nodes: Sequence[tuple[str, float, Iterable[str]]]) -> list[list[str]]:
    """Topological levels of ``(name, weight, dependencies)``: a node is in
    the first level after all of its dependencies. Within a level, nodes are
    ordered by weight (lower first), then name. Assumes no cycle (see
    ``find_cycle``)."""
    deps = {name: set(d) for name, _, d in nodes}
    weight = {name: w for name, w, _ in nodes}
    placed: set[str] = set()
    out: list[list[str]] = []
    remaining = [name for name, _, _ in nodes]
    while remaining:
        ready = [n for n in remaining if deps[n] <= placed]
        if not ready:
            raise ValueError(f"dependency cycle among {sorted(remaining)}")
        ready.sort(key=lambda n: (weight[n], n))
        out.append(ready)
        placed.update(ready)
        remaining = [n for n in remaining if n not in placed]
    return out


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """A cycle as ``[a, b, ..., a]`` (a depends on b ...), or None. Visits
    nodes in sorted order so the cycle reported is always the same one."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if state.get(m) is None and m in graph:
                found = visit(m)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if state.get(n) is None:
            found = visit(n)
            if found:
                return found
    return None


def check_structure(wf: Workflow) -> list[Problem]:
    """Every structural problem: duplicate names, dependencies on unknown or
    own names, cycles. Each names its place in the document."""
    problems: list[Problem] = []
    job_names = [j.name for j in wf.jobs]
    problems += _duplicates(job_names, "jobs", "job")
    job_graph: dict[str, list[str]] = {}
    for i, job in enumerate(wf.jobs):
        job_graph.setdefault(job.name, [])
        problems += _references(f"jobs[{i}].dependsOn", [d.job for d in job.dependsOn], job.name,
                                job_names, "job")
        job_graph[job.name] += [d.job for d in job.dependsOn if d.job in job_names and d.job != job.name]
        step_names = [s.name for s in job.steps]
        problems += _duplicates(step_names, f"jobs[{i}].steps", "step")
        step_graph: dict[str, list[str]] = {}
        for k, step in enumerate(job.steps):
            step_graph.setdefault(step.name, [])
            problems += _references(f"jobs[{i}].steps[{k}].dependsOn", [d.step for d in step.dependsOn],
                                    step.name, step_names, f"step of job {job.name!r}")
            step_graph[step.name] += [d.step for d in step.dependsOn
                                      if d.step in step_names and d.step != step.name]
        cycle = find_cycle(step_graph)
        if cycle:
            problems.append(Problem(f"jobs[{i}].steps", f"dependency cycle {' -> '.join(cycle)}"))
    cycle = find_cycle(job_graph)
    if cycle:
        problems.append(Problem("jobs", f"dependency cycle {' -> '.join(cycle)}"))
    return problems


def _duplicates(names: list[str], where: str, what: str) -> list[Problem]:
    seen: set[str] = set()
    out = []
    for i, n in enumerate(names):
        if n in seen:
            out.append(Problem(f"{where}[{i}].name", f"another {what} is already named {n!r}"))
        seen.add(n)
    return out


def _references(where: str, refs: list[str], own: str, names: list[str], what: str) -> list[Problem]:
    out = []
    seen: set[str] = set()
    for k, ref in enumerate(refs):
        if ref == own:
            out.append(Problem(f"{where}[{k}]", f"{own!r} cannot depend on itself"))
        elif ref not in names:
            hint = did_you_mean(ref, [n for n in names if n != own])
            out.append(Problem(f"{where}[{k}]", f"no {what} named {ref!r}" + (f" ({hint})" if hint else "")))
        elif ref in seen:
            out.append(Problem(f"{where}[{k}]", f"{ref!r} is listed twice"))
        seen.add(ref)
    return out


def job_levels(wf: Workflow) -> list[list[str]]:
    return levels([(j.name, j.weight, [d.job for d in j.dependsOn]) for j in wf.jobs])


def step_levels(job) -> list[list[str]]:
    return levels([(s.name, s.weight, [d.step for d in s.dependsOn]) for s in job.steps])
