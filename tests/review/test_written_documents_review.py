"""Review of the documents a run writes without pydantic: an output record
(models/outputs.OutputRecord) and a data version's metadata.yaml
(data/metadata_write): for any values, the same document as the schema's
``model_dump(exclude_none=True)``, key for key and type for type, the same
YAML bytes as ruamel.yaml wrote for it, and the same refusals."""

from __future__ import annotations


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swamp.data import metadata_write
from swamp.util import yamlio
from tests.yaml_reference import ruamel_dump, typed

FEW = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class _Str(str):
    pass


text = st.one_of(st.sampled_from(["x", "", "2026-12-01T01:02:03.456Z", "true", "1", "-0", "a: b", "é", "a\nb",
                                  "command/shell", "e0cd1e6f-badf-42de-9e6f-6d21d08fcf9d", "0b1", "1e3"]),
                 st.text(max_size=6))
odd = st.one_of(text, st.just(_Str("x")), st.booleans(), st.integers(-3, 3), st.integers(2**63, 2**64),
                st.floats(allow_nan=True), st.just(5.0), st.none(), st.just(b"x"), st.just(("a",)),
                st.lists(text, max_size=2), st.dictionaries(text, text, max_size=2))

RECORD = {
    "id": text, "definitionId": text, "modelName": text, "modelType": text, "modelVersion": text,
    "methodName": text, "status": st.sampled_from(["succeeded", "failed", "cancelled", "running", "Succeeded"]),
    "startedAt": text, "completedAt": text, "durationMs": st.integers(-1, 10**20),
}
RECORD_OPTIONAL = {
    "dataArtifacts": st.lists(st.dictionaries(text, st.one_of(text, st.integers(), st.floats(allow_nan=False),
                                                              st.booleans(), st.none()), max_size=3), max_size=2),
    "inputs": st.lists(text, max_size=2), "tags": st.dictionaries(text, text, max_size=2),
    "triggeredBy": st.sampled_from(["manual", "workflow", "model", "cron"]), "workflowRunId": st.none() | text,
    "workflowName": st.none() | text, "stepName": st.none() | text, "error": st.none() | text,
    "logFile": st.none() | text, "pid": st.none() | st.integers(0, 2**40),
}


def _maybe_odd(strategies: dict) -> dict:
    return {k: st.one_of(s, odd) for k, s in strategies.items()}


records = st.one_of(
    st.fixed_dictionaries(RECORD, optional=RECORD_OPTIONAL),
    st.fixed_dictionaries(_maybe_odd(RECORD), optional={**_maybe_odd(RECORD_OPTIONAL), "extra": odd}),
)


def _schema(cls, values):
    from pydantic import ValidationError

    try:
        return cls(**values)
    except ValidationError:
        return None


@FEW
@given(records)
def test_an_output_record_is_the_schemas_document_and_bytes(values):
    from swamp.models.output_schema import OutputRecordSchema
    from swamp.models.outputs import OutputRecord

    want = _schema(OutputRecordSchema, values)
    try:
        rec = OutputRecord(**values)
    except Exception as e:  # the schema's own ValidationError, as before
        assert want is None, (values, e)
        return
    assert want is not None, values
    doc, want_doc = rec.to_json(), want.model_dump(exclude_none=True)
    assert typed(doc) == typed(want_doc)
    assert yamlio.dumps(doc) == ruamel_dump(want_doc)


OWNER = {"definitionId": text, "definitionName": text, "modelType": text}
OWNER_OPTIONAL = {k: st.none() | text for k in ("methodName", "outputId", "workflowRunId", "workflowName",
                                                  "stepName")}
META = {
    "id": text, "name": text, "version": st.integers(0, 10**20), "specName": text,
    "kind": st.sampled_from(["resource", "file", "other"]), "contentType": text, "lifetime": text,
    "owner": st.fixed_dictionaries(OWNER, optional=OWNER_OPTIONAL), "createdAt": text,
    "size": st.integers(0, 10**20), "sha256": text,
}
META_OPTIONAL = {"garbageCollection": st.none() | st.integers(-1, 50) | text, "streaming": st.booleans(),
                 "tags": st.dictionaries(text, text, max_size=2)}
metas = st.one_of(
    st.fixed_dictionaries(META, optional=META_OPTIONAL),
    st.fixed_dictionaries(_maybe_odd(META), optional={**_maybe_odd(META_OPTIONAL), "extra": odd}),
    st.fixed_dictionaries({**META, "owner": st.fixed_dictionaries(_maybe_odd(OWNER),
                                                                  optional={**_maybe_odd(OWNER_OPTIONAL),
                                                                            "extra": odd})}),
)


@FEW
@given(metas)
def test_a_data_versions_metadata_is_the_schemas_document_and_bytes(fields):
    from swamp.data.metadata import DataMetadata

    want = _schema(DataMetadata, fields)
    try:
        doc = metadata_write.build(fields)
    except Exception as e:
        assert want is None, (fields, e)
        return
    assert want is not None, fields
    assert typed(doc) == typed(want.model_dump())
    written, want_written = metadata_write.without_none(doc), want.model_dump(exclude_none=True)
    assert typed(written) == typed(want_written)
    assert yamlio.dumps(written) == ruamel_dump(want_written)


def test_an_output_record_survives_pickle_copy_and_reads_back_equal():
    """A record crosses processes (workers pickle it) and is read back from
    its file: the same record each way, and the caller's lists are not its own."""
    import copy
    import pickle

    from swamp.models.output_schema import OutputRecordSchema
    from swamp.models.outputs import OutputRecord
    from swamp.util import yamlio

    tags = {"env": "prod"}
    values = dict(id="e0cd1e6f-badf-42de-9e6f-6d21d08fcf9d", definitionId="d", modelName="m", modelType="command/shell",
                  modelVersion="2026.11.30.1", methodName="execute", status="failed", startedAt="2026-12-01T01:02:03.456Z",
                  completedAt="2026-12-01T01:02:04.000Z", durationMs=544, tags=tags, error="boom: 'x'\nline two",
                  dataArtifacts=[{"name": "log", "version": 1, "kind": "file"}], pid=7)
    rec = OutputRecord(**values)
    tags["env"] = "changed"
    assert rec.tags == {"env": "prod"}
    for other in (pickle.loads(pickle.dumps(rec)), copy.deepcopy(rec), copy.copy(rec)):
        assert other == rec and other.to_json() == rec.to_json() and repr(other) == repr(rec)
    text = yamlio.dumps(rec.to_json())
    back = OutputRecord.from_schema(OutputRecordSchema.model_validate(yamlio.loads(text)))
    assert back == rec and yamlio.dumps(back.to_json()) == text
