"""The documents a method run writes (its output record, each data
version's metadata.yaml) are built without pydantic, and must be exactly
what their pydantic schema would have written: the same keys in the same
order, the same values, the same bytes on disk; and anything the schema
would refuse is refused with the schema's own error. Hypothesis builds
documents both ways and compares them; a real run's files are read back
through the schemas."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from swamp.data import metadata_write
from swamp.data.metadata import DataMetadata
from swamp.data.repository import DataRepository
from swamp.datastore.filesystem import FilesystemDatastore
from swamp.models.output_schema import OutputRecordSchema
from swamp.models.outputs import OutputRecord, load_record, record_path, write_record
from swamp.util import documents, yamlio

TYPE, MID = "acme/thing", "6b3e2e54-f631-4d36-a190-196abd4dddf4"
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")
EXAMPLES = settings(max_examples=300 if os.environ.get("CI") else 150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", "yes", "no", "null", "~", "1", "0o7", "1e3", "2026-11-30", "2026-11-30T00:00:00.000Z", "a: b", "- x",
     "'q'", "#c", "@x", "true", "NaN", ".inf"])
#: values of the wrong type, or of a type the schema converts
odd = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.just(("a",)),
                st.just([1]), st.just({"k": 1}), st.just(b"x"))


def maybe(strategy, wrong=0.0):
    """``strategy``, or now and then a value the schema would refuse or convert."""
    return st.one_of(strategy, odd) if wrong else strategy


def _both(build_light, build_schema):
    """(light result, schema result) or the schema's refusal, which the
    light path must raise as well."""
    try:
        expected = build_schema()
    except ValidationError as e:
        with pytest.raises(ValidationError) as got:
            build_light()
        assert str(got.value).split("\n", 1)[1] == str(e).split("\n", 1)[1]
        return None, None
    return build_light(), expected


# ----------------------------------------------------------- output record
scalars = st.one_of(text, st.integers(-5, 10**6), st.booleans(), st.none(), st.floats(allow_nan=False))
artifact = st.dictionaries(st.sampled_from(["name", "specName", "version", "kind", "x"]), scalars, max_size=4)
record_values = st.fixed_dictionaries(
    {"id": text, "definitionId": text, "modelName": text, "modelType": text, "modelVersion": text,
     "methodName": text, "status": st.sampled_from(["succeeded", "failed", "cancelled"]),
     "startedAt": text, "completedAt": text, "durationMs": st.integers(0, 10**7)},
    optional={"dataArtifacts": st.lists(artifact, max_size=3) | st.just(()) | st.lists(st.just([1]), max_size=1),
              "inputs": st.lists(text, max_size=3) | st.tuples(text),
              "tags": st.dictionaries(text, text, max_size=3) | st.just({"n": 1}),
              "triggeredBy": st.sampled_from(["manual", "workflow", "model", "cron"]),
              "workflowRunId": st.none() | text, "workflowName": st.none() | text, "stepName": st.none() | text,
              "error": st.none() | text, "logFile": st.none() | text,
              "pid": st.none() | st.integers(1, 2**22) | st.just(True) | st.just("12"), "surprise": st.just(1)})
#: now and then a required value the schema refuses or converts
record_values = st.tuples(record_values, st.fixed_dictionaries({}, optional={
    "status": st.sampled_from(["running", 1]), "durationMs": st.just(2.0) | st.just("3") | st.just(True),
    "id": st.none() | st.just(5)})).map(lambda t: {**t[0], **t[1]})


def _drop_unlikely(values: dict) -> dict:
    # "surprise" (an unknown key) in one example of ten is enough
    if "surprise" in values and len(values["definitionId"]) % 10:
        values = {k: v for k, v in values.items() if k != "surprise"}
    return values


@EXAMPLES
@given(record_values)
def test_an_output_record_is_the_schemas_document(values):
    values = _drop_unlikely(values)
    rec, model = _both(lambda: OutputRecord(**values), lambda: OutputRecordSchema(**values))
    if model is None:
        return
    assert rec.to_json() == model.model_dump(exclude_none=True)
    assert list(rec.to_json()) == list(model.model_dump(exclude_none=True))
    assert yamlio.dumps(rec.to_json()) == yamlio.dumps(model.model_dump(exclude_none=True))
    for name, value in model.model_dump().items():
        assert getattr(rec, name) == value and type(getattr(rec, name)) is type(value)
    # what is written reads back through the schema as the same record
    assert OutputRecord.from_schema(OutputRecordSchema.model_validate(yamlio.loads(yamlio.dumps(rec.to_json())))) \
        == rec


def _record(**kw):
    values = {"id": "e0cd1e6f-badf-42de-9e6f-6d21d08fcf9d", "definitionId": "ab618539-739d-41a2-b819-6560f1551add",
              "modelName": "m00", "modelType": "command/shell", "modelVersion": "2026.11.30.1",
              "methodName": "execute", "status": "succeeded", "startedAt": "2026-12-01T01:28:34.585Z",
              "completedAt": "2026-12-01T01:28:34.621Z", "durationMs": 36,
              "dataArtifacts": [{"name": "log", "specName": "log", "version": 1, "kind": "file"}],
              "inputs": [], "tags": {}, "triggeredBy": "manual", "pid": 15696}
    return OutputRecord(**{**values, **kw})


def test_a_written_record_is_byte_identical_and_reads_back(tmp_path):
    ds = FilesystemDatastore(tmp_path)
    rec = _record(tags={"env": "prod"}, error="boom")
    write_record(ds, rec, "line\n")
    rel = record_path(rec)
    on_disk = ds.read_bytes(rel)
    schema = OutputRecordSchema(**{**rec.to_json()})
    assert on_disk == yamlio.dumps(schema.model_dump(exclude_none=True)).encode()
    assert load_record(ds, rel) == rec
    assert ds.read_bytes(rec.logFile) == b"line\n"


def test_a_record_takes_assignment_and_keeps_defaults_apart():
    a, b = _record(), _record()
    a.tags["x"] = "1"
    a.logFile = "outputs/x.log"
    assert b.tags == {} and b.logFile is None
    assert a.to_json()["logFile"] == "outputs/x.log"
    assert a != b


# --------------------------------------------------------- data metadata
owner = st.fixed_dictionaries(
    {"definitionId": text, "definitionName": text, "modelType": text},
    optional={"methodName": st.none() | text, "outputId": st.none() | text, "workflowRunId": st.none() | text,
              "workflowName": st.none() | text, "stepName": st.none() | text | st.just(3),
              "other": st.just("x")})
owner = st.tuples(owner, st.fixed_dictionaries({}, optional={"definitionName": st.none()})).map(
    lambda t: {**t[0], **t[1]})
meta_fields = st.fixed_dictionaries(
    {"id": text, "name": text, "version": st.integers(1, 10**6), "specName": text,
     "kind": st.sampled_from(["resource", "file"]), "contentType": text, "lifetime": text,
     "owner": owner, "createdAt": text, "size": st.integers(0, 10**9), "sha256": text},
    optional={"garbageCollection": st.none() | st.integers(0, 100) | text | st.just(True) | st.just(1.5),
              "streaming": st.booleans() | st.just(1) | st.just("yes"),
              "tags": st.dictionaries(text, text, max_size=4) | st.just({"a": 1}) | st.just({1: "a"}),
              "unknown": st.just(1)})
meta_fields = st.tuples(meta_fields, st.fixed_dictionaries({}, optional={
    "kind": st.just("blob"), "version": st.just("2") | st.just(2.0) | st.just(True),
    "owner": st.just({"definitionId": "d"}) | st.just("owner"), "size": st.none()})).map(
    lambda t: {**t[0], **t[1]})


@EXAMPLES
@given(meta_fields)
def test_metadata_is_the_schemas_document(fields):
    if "unknown" in fields and len(fields["name"]) % 10:
        fields = {k: v for k, v in fields.items() if k != "unknown"}
    doc, model = _both(lambda: metadata_write.build(fields), lambda: DataMetadata(**fields))
    if model is None:
        return
    assert doc == model.model_dump()
    assert list(doc) == list(model.model_dump()) and list(doc["owner"]) == list(model.model_dump()["owner"])
    written = metadata_write.without_none(doc)
    assert written == model.model_dump(exclude_none=True)
    assert yamlio.dumps(written) == yamlio.dumps(model.model_dump(exclude_none=True))
    assert DataMetadata.model_validate(yamlio.loads(yamlio.dumps(written))).model_dump() == doc


def test_a_written_version_validates_under_the_schema(tmp_path):
    data = DataRepository(FilesystemDatastore(tmp_path))
    fields = {"id": "x", "name": "result", "specName": "result", "kind": "resource",
              "contentType": "application/json", "lifetime": "infinite", "garbageCollection": 10,
              "tags": {"type": "resource"}, "createdAt": "2026-11-30T00:00:00.000Z",
              "owner": {"definitionId": "d", "definitionName": "m", "modelType": "t", "methodName": "run",
                        "outputId": "o"}}
    rec = data.write(TYPE, MID, fields, b"{}")
    text = (tmp_path / rec.path / "metadata.yaml").read_text()
    model = documents.validate(DataMetadata, yamlio.loads(text), "metadata.yaml")
    assert text == yamlio.dumps(model.model_dump(exclude_none=True))
    assert dict(rec.meta) == model.model_dump()


def test_a_bad_field_is_refused_as_the_schema_refuses_it(tmp_path):
    data = DataRepository(FilesystemDatastore(tmp_path))
    fields = {"id": "x", "name": "n", "specName": "s", "kind": "blob", "contentType": "c", "lifetime": "infinite",
              "createdAt": "t", "owner": {"definitionId": "d", "definitionName": "m", "modelType": "t"}}
    with pytest.raises(ValidationError, match="kind"):
        data.write(TYPE, MID, fields, b"{}")
    assert data.versions(TYPE, MID, "n") == []


# ----------------------------------------------------------- a real run
def test_a_no_op_run_imports_no_pydantic_and_writes_what_the_schemas_read(tmp_path):
    """A command/shell run of `true` builds and writes its record and data
    versions without pydantic (the schemas are not loaded), and every file
    it wrote validates under its schema."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "_SWAMP_", "SWAMP_"))}
    env["PYTHONPATH"] = os.path.abspath(SRC)

    def swamp(*args):
        return subprocess.run([sys.executable, "-m", "swamp.cli.main", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, check=True)

    swamp("repo", "init")
    swamp("model", "create", "command/shell", "m00", "--global-arg", "run=true")
    code = ("import sys\nfrom swamp.cli.main import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
            "    print('schemas loaded:', *sorted(m for m in ('swamp.models.output_schema', 'swamp.data.metadata') "
            "if m in sys.modules), file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code, "model", "method", "run", "m00", "execute"], cwd=tmp_path,
                       env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip().splitlines()[-1] == "schemas loaded:", p.stderr
    ds = FilesystemDatastore(tmp_path / ".swamp")
    records = [rel for rel in ds.walk("outputs") if rel.endswith(".yaml")]
    metas = [rel for rel in ds.walk("data") if rel.endswith("metadata.yaml")]
    assert len(records) == 1 and len(metas) == 2
    for rel in records:
        text = ds.read_bytes(rel).decode()
        model = documents.validate(OutputRecordSchema, yamlio.loads(text), rel)
        assert text == yamlio.dumps(model.model_dump(exclude_none=True))
    for rel in metas:
        text = ds.read_bytes(rel).decode()
        model = documents.validate(DataMetadata, yamlio.loads(text), rel)
        assert text == yamlio.dumps(model.model_dump(exclude_none=True))


def test_a_record_keeps_its_own_copies_as_the_schema_does():
    tags, inputs = {"env": "prod"}, ["a"]
    rec, model = _record(tags=tags, inputs=inputs), OutputRecordSchema(**{**_record().to_json(), "tags": tags})
    tags["env"] = "dev"
    inputs.append("b")
    assert rec.tags == {"env": "prod"} == model.tags and rec.inputs == ["a"]
