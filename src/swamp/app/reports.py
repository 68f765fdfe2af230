"""Report use cases: choosing a run's reports before it starts, running
them after it ends (a method run's inside its own session; a workflow
run's in a session of their own, under the workflow's report lease), and
reading report types and stored reports (``swamp report ...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.app.lifecycle import changing, reading
from swamp.errors import NotFoundError, UnpublishedError, UsageError
from swamp.models.leases import model_lock_name

if TYPE_CHECKING:
    from swamp.datastore.sync.counts import SyncCounts
    from swamp.repo.context import Repo
    from swamp.reports.run import Selection

# reports.store and reports.run load where they are used: a method run that
# selects no report (most) never needs them.


def registry(repo: Repo):
    from swamp.reports.registry import ReportRegistry

    return ReportRegistry(repo)


def selection(*, requested: tuple[str, ...], skip_all: bool, skip: tuple[str, ...]) -> Selection:
    """Which reports a run asked for (--report), and which it skips
    (--skip-reports, --skip-report)."""
    from swamp.reports.run import Selection

    return Selection(requested=requested, skip_all=skip_all, skip=skip)


# --------------------------------------------------------------- method runs
def for_method(repo: Repo, definition, selection: Selection | None) -> list:
    """The report types to run after each run of ``definition``'s methods;
    refuses unknown names before anything starts."""
    from swamp.reports.run import choose

    declared = getattr(definition, "reports", None) or []
    if not declared and (selection is None or (not selection.requested and not selection.skip)):
        return []
    return choose(registry(repo), "method", declared, selection, f"model {definition.name}")


def after_method(repo: Repo, data, record, types) -> list:
    """Run a method run's reports. Called inside the run's session (the
    model's lease is held), so the reports go out in the run's commit."""
    from swamp.reports.run import run_reports

    if not types:
        return []
    from swamp.reports.api import ReportContext

    items = [{"model": record.modelName, "modelType": record.modelType, "modelId": record.definitionId, **a}
             for a in record.dataArtifacts]

    def reader(item: dict) -> bytes:
        return data.content(data.get(item["modelType"], item["modelId"], item["name"], item["version"]))

    run_doc = record.to_json()
    run_doc.pop("pid", None)
    ctx = ReportContext("method", run_doc, items, reader)
    owner = {"owner_type": record.modelType, "owner_id": record.definitionId, "owner_name": record.modelName,
             "method": record.methodName, "output_id": record.id, "workflow_run_id": record.workflowRunId,
             "workflow_name": record.workflowName}
    return run_reports(data, types, ctx, record.id, owner)


# ------------------------------------------------------------- workflow runs
def for_workflow(repo: Repo, wf, selection: Selection | None) -> list:
    from swamp.reports.run import choose

    declared = getattr(wf, "reports", None) or []
    if not declared and (selection is None or (not selection.requested and not selection.skip)):
        return []
    return choose(registry(repo), "workflow", declared, selection, f"workflow {wf.name}")


FINISHED = ("succeeded", "failed", "cancelled")


def after_workflow(repo: Repo, run, types, counts: SyncCounts) -> tuple[list, UnpublishedError | None]:
    """Run a finished workflow run's reports in one session under the lease
    of the workflow's reports. A suspended run gets them when it ends."""
    from swamp.reports import store
    from swamp.reports.run import run_reports

    if not types or run.status not in FINISHED:
        return [], None
    from swamp.data.repository import DataRepository
    from swamp.reports.api import ReportContext

    data = DataRepository(repo.datastore)
    items = []
    for job in run.jobs:
        for s in job.steps:
            items += [{"job": job.name, "step": s.name, "model": s.model, "outputId": s.outputId, **a}
                      for a in s.dataArtifacts]

    def reader(item: dict) -> bytes:
        from swamp.models.outputs import find_record

        _, rec = find_record(repo.datastore, item["outputId"])
        return data.content(data.get(rec.modelType, rec.definitionId, item["name"], item["version"]))

    run_doc = run.to_json()
    for key in ("pid", "host", "inputs"):
        run_doc.pop(key, None)
    ctx = ReportContext("workflow", run_doc, items, reader)
    owner = {"owner_type": store.WORKFLOW_OWNER, "owner_id": run.workflowId, "owner_name": run.workflowName,
             "workflow_run_id": run.id, "workflow_name": run.workflowName}
    outcomes: list = []
    try:
        with changing(repo, f"workflow run {run.workflowName}: reports",
                      leases=[model_lock_name(store.WORKFLOW_OWNER, run.workflowId)], into=counts):
            outcomes = run_reports(data, types, ctx, run.id, owner)
    except UnpublishedError as e:
        return outcomes, e
    return outcomes, None


# ------------------------------------------------------------------- reading
def search(repo: Repo, query: str | None = None) -> list[dict]:
    """Report types whose name or description has ``query``, sorted by name."""
    reg = registry(repo)
    q = (query or "").lower()
    out = [{**r.describe(), "source": reg.source(r.name)} for r in reg.all()
           if q in r.name.lower() or q in r.description.lower()]
    return sorted(out, key=lambda r: r["name"])


def describe(repo: Repo, name: str) -> dict:
    reg = registry(repo)
    r = reg.get(name)
    doc = {**r.describe(), "source": reg.source(r.name),
           "runs": ("after 'swamp model method run' when selected (the definition's reports: or --report)"
                    if r.scope == "method" else
                    "after 'swamp workflow run' when selected (the workflow's reports: or --report)")}
    if r.fn is not None and r.fn.__doc__:
        doc["details"] = r.fn.__doc__.strip()
    return doc


def _owner(repo: Repo, model: str | None, workflow: str | None) -> tuple[str, str, str]:
    from swamp.reports import store

    if bool(model) == bool(workflow):
        raise UsageError("name the run's owner: --model MODEL or --workflow WORKFLOW (one of them)",
                         hint="swamp report list --workflow deploy")
    if model:
        from swamp.models.definitions import find_definition

        try:
            _, d = find_definition(repo, model)
        except NotFoundError:
            d = _auto_definition(repo, model)  # a type run directly as MODEL
            if d is None:
                raise
        return d.type, d.id, d.name
    from swamp.workflows.files import find_workflow
    from swamp.workflows.schema import workflow_id

    _, wf = find_workflow(repo, workflow)
    return store.WORKFLOW_OWNER, workflow_id(wf), wf.name


def _auto_definition(repo: Repo, name: str):
    from swamp.errors import SwampError
    from swamp.models import auto_definitions

    for path in auto_definitions.iter_files(repo):
        try:
            d = auto_definitions.load(path)
        except SwampError:
            continue
        if d.name == name:
            return d
    return None


def list_reports(repo: Repo, *, model: str | None = None, workflow: str | None = None, run: str | None = None,
                 report: str | None = None) -> list[dict]:
    """Stored reports of a model's or a workflow's runs (of every model
    and workflow when neither is named), newest first."""
    from swamp.data.repository import DataRepository
    from swamp.reports import store

    data = DataRepository(repo.datastore)
    if model or workflow:
        owners = [_owner(repo, model, workflow)[:2]]
    else:
        owners = None
    with reading(repo):
        if owners is None:
            from swamp.data.walk import iter_models

            owners = list(iter_models(repo.datastore))
        rows = [store.row(r) for owner_type, owner_id in owners
                for r in store.stored(data, owner_type, owner_id, report)]
    if run:
        rows = [r for r in rows if (r["runId"] or "").startswith(run)]
    return sorted(rows, key=lambda r: (r["createdAt"], r["dataName"], r["version"]), reverse=True)


def get(repo: Repo, name: str, *, model: str | None = None, workflow: str | None = None, run: str | None = None,
        version: int | None = None) -> dict:
    """One stored report: the latest of ``name``, of one run, or one version."""
    from swamp.data.repository import DataRepository
    from swamp.reports import store

    owner_type, owner_id, owner_name = _owner(repo, model, workflow)
    data = DataRepository(repo.datastore)
    with reading(repo):
        found = store.stored(data, owner_type, owner_id, name)
        if version is not None:
            found = [r for r in found if r.meta.version == version]
        if run:
            found = [r for r in found if ((r.meta.tags or {}).get("runId") or "").startswith(run)]
        if not found:
            what = f"report {name!r} of {owner_name}" + (f" for run {run}" if run else "") \
                + (f" at version {version}" if version is not None else "")
            known = sorted({r.meta.tags.get("report") for r in store.stored(data, owner_type, owner_id)})
            raise NotFoundError(f"no {what}",
                                hint=(f"its reports: {', '.join(known)}" if known else
                                      f"{owner_name} has no stored report yet; run it with --report {name}"))
        record = found[-1]
        doc = store.read(data, record)
    return {**doc, "owner": owner_name, "dataName": record.meta.name, "version": record.meta.version}


def workflow_owners(repo: Repo) -> dict[str, str]:
    """Each workflow's name by its id: the owners of workflow reports, so
    that data commands do not take a live workflow's reports for the data
    of a deleted definition."""
    from swamp.errors import SwampError
    from swamp.workflows.files import iter_workflow_files, load_workflow
    from swamp.workflows.schema import workflow_id

    out = {}
    for path in iter_workflow_files(repo):
        try:
            wf = load_workflow(path, repo.root)
        except SwampError:
            continue
        out[workflow_id(wf)] = wf.name
    return out
