"""Output records: one per method run, written once in its final state, with
the run log beside it.
``outputs/{type}/{definitionId}/{method}/{startedAt}-{outputId}.yaml`` (+ ``.log``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from swamp.datastore.base import Datastore
from swamp.errors import NotFoundError
from swamp.util import documents, yamlio

if TYPE_CHECKING:
    from swamp.repo.context import Repo

OUTPUTS = "outputs"

#: the record's fields in the schema's order (models/output_schema.py), with
#: their defaults (a list or dict default is a new one per record)
_REQUIRED = ("id", "definitionId", "modelName", "modelType", "modelVersion", "methodName", "status",
             "startedAt", "completedAt", "durationMs")
_DEFAULTS: dict[str, Any] = {"dataArtifacts": list, "inputs": list, "tags": dict, "triggeredBy": "manual",
                             "initiatedBy": None, "workflowRunId": None, "workflowName": None, "stepName": None, "error": None,
                             "stderrTail": None, "logFile": None, "pid": None}
_FIELDS = _REQUIRED + tuple(_DEFAULTS)
_STATUS = ("succeeded", "failed", "cancelled")
_TRIGGERS = ("manual", "workflow", "model")
_SCALARS = (str, int, float, bool, type(None))


class OutputRecord:
    """One method run's record, as the runner builds it and as a read gives
    it back: attributes named as the document's keys.

    Its schema is ``models/output_schema.OutputRecordSchema``; building a
    record does not import it (pydantic costs a no-op run most of its
    start-up) when every value is exactly of the type the schema keeps, as
    the runner's always are. Anything else (a tuple for a list, an unknown
    key, a wrong type) goes to the schema, which normalizes it or raises its
    ValidationError, so a record never holds what the schema would refuse."""

    __slots__ = _FIELDS

    def __init__(self, **values: Any) -> None:
        if not _exact(values):
            from swamp.models.output_schema import OutputRecordSchema

            values = OutputRecordSchema(**values).model_dump()
        for name in _REQUIRED:
            setattr(self, name, values[name])
        for name, default in _DEFAULTS.items():
            value = values.get(name, default)
            if value is list or value is dict:
                value = value()
            elif name == "dataArtifacts":  # copies, as the schema's validation makes
                value = [dict(a) for a in value]
            elif type(value) is list or type(value) is dict:
                value = value.copy()
            setattr(self, name, value)

    @classmethod
    def from_schema(cls, model) -> "OutputRecord":
        """The record a validated schema model holds."""
        rec = cls.__new__(cls)
        for name, value in model.model_dump().items():
            setattr(rec, name, value)
        return rec

    def to_json(self) -> dict:
        """The document as written: the schema's ``model_dump(exclude_none=True)``."""
        out: dict = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "dataArtifacts":
                value = [dict(a) for a in value]
            elif type(value) is list or type(value) is dict:
                value = value.copy()
            out[name] = value
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutputRecord):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the pydantic model it mirrors

    def __repr__(self) -> str:
        return "OutputRecord(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in _FIELDS) + ")"


def _opt_str(value: Any) -> bool:
    return value is None or type(value) is str


def _exact(values: dict) -> bool:
    """Whether ``values`` are exactly what the schema keeps: every required
    key, no other key, each value of the type the schema gives back as is."""
    for name in _REQUIRED:
        if name not in values:
            return False
    for name, value in values.items():
        if name in ("id", "definitionId", "modelName", "modelType", "modelVersion", "methodName", "startedAt",
                    "completedAt"):
            ok = type(value) is str
        elif name == "status":
            ok = type(value) is str and value in _STATUS
        elif name == "durationMs":
            ok = type(value) is int
        elif name == "dataArtifacts":
            ok = type(value) is list and all(
                type(a) is dict and all(type(k) is str and type(v) in _SCALARS for k, v in a.items())
                for a in value)
        elif name == "inputs":
            ok = type(value) is list and all(type(v) is str for v in value)
        elif name == "tags":
            ok = type(value) is dict and all(type(k) is str and type(v) is str for k, v in value.items())
        elif name == "triggeredBy":
            ok = type(value) is str and value in _TRIGGERS
        elif name in ("initiatedBy", "workflowRunId", "workflowName", "stepName", "error", "stderrTail",
                      "logFile"):
            ok = _opt_str(value)
        elif name == "pid":
            ok = value is None or type(value) is int
        else:
            return False  # unknown key: the schema names it
        if not ok:
            return False
    return True


def record_path(rec: OutputRecord) -> str:
    stamp = rec.startedAt.replace(":", "").replace("-", "").replace(".", "")
    return f"{OUTPUTS}/{rec.modelType}/{rec.definitionId}/{rec.methodName}/{stamp}-{rec.id}.yaml"


def write_record(ds: Datastore, rec: OutputRecord, log_text: str) -> None:
    from swamp.vault.redact import redact_text

    path = record_path(rec)
    log_path = path[: -len(".yaml")] + ".log"
    ds.write_bytes(log_path, redact_text(log_text).encode())
    rec.logFile = log_path
    ds.write_bytes(path, redact_text(yamlio.dumps(rec.to_json())).encode())


def iter_records(ds: Datastore) -> Iterator[tuple[str, OutputRecord]]:
    for rel in ds.walk(OUTPUTS):
        if rel.endswith(".yaml"):
            yield rel, load_record(ds, rel)


def load_record(ds: Datastore, rel: str) -> OutputRecord:
    from swamp.models.output_schema import OutputRecordSchema

    doc = documents.validate(OutputRecordSchema, yamlio.loads(ds.read_bytes(rel).decode(), rel), rel)
    return OutputRecord.from_schema(doc)


#: the shortest id prefix accepted (a shorter one matches too much to mean one run)
MIN_PREFIX = 4


def find_record(ds: Datastore, output_id: str) -> tuple[str, OutputRecord]:
    """The record of the run with this id, or with the one id that starts
    with it (as git takes a short commit id)."""
    from swamp.errors import ConflictError

    if len(output_id) < MIN_PREFIX:
        raise NotFoundError(f"no method run with id {output_id!r}",
                            hint=f"give the id, or at least its first {MIN_PREFIX} characters")
    found = []
    for rel in ds.walk(OUTPUTS):
        if not rel.endswith(".yaml"):
            continue
        run_id = _id_of(rel)
        if run_id == output_id:
            return rel, load_record(ds, rel)
        if run_id.startswith(output_id):
            found.append(rel)
    if len(found) == 1:
        return found[0], load_record(ds, found[0])
    if found:
        ids = sorted(_id_of(rel) for rel in found)
        raise ConflictError(f"{output_id!r} is the start of {len(ids)} run ids: {', '.join(ids[:5])}"
                            + (" ..." if len(ids) > 5 else ""), hint="give more of the id")
    raise NotFoundError(f"no method run with id {output_id!r}", hint="list runs with 'swamp model output search'")


def newest_record_of(repo: Repo, ref: str) -> tuple[str, OutputRecord]:
    """``ref`` as a model's name (a definition's file name, or the model of
    a past run) means that model's newest run; anything else is a run id
    or its start (find_record)."""
    from swamp.models.definition_files import iter_definition_files

    defined = any(p.stem == ref for p in iter_definition_files(repo))
    not_an_id = None
    if not defined:
        try:
            return find_record(repo.datastore, ref)
        except NotFoundError as e:
            not_an_id = e
    runs = [(rec.startedAt, rec.id, rel, rec) for rel, rec in iter_records(repo.datastore) if rec.modelName == ref]
    if runs:
        _, _, rel, rec = max(runs, key=lambda r: (r[0], r[1]))
        return rel, rec
    if defined:
        raise NotFoundError(f"model {ref!r} has no method runs yet",
                            hint=f"run one with 'swamp model method run {ref} METHOD'")
    raise not_an_id  # no model of that name ran either: the id's own error (and its hint)


def _id_of(rel: str) -> str:
    """<time>-<id>.yaml -> id (ids are uuids: the last five dash-separated parts)."""
    return "-".join(rel.rsplit("/", 1)[-1][: -len(".yaml")].split("-")[-5:])
