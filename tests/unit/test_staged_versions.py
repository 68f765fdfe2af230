"""A workflow step's versions are staged while its method runs and numbered
only once it ends, under the model's lease (models/staged_versions.py,
docs/sync.md "Concurrent runs of one model"): the method reads its own
writes back, a streamed file arrives whole, a delete waits for the lease
too, and a cancelled or failed-and-retried attempt takes no number."""

from __future__ import annotations

import json

import pytest

from tests.helpers import init_repo, run, steps, visible_versions, write_type, write_workflow

WRITER = '''
    from pydantic import BaseModel
    from swamp import Context, ModelType


    class Args(BaseModel):
        value: str = ""
        fail: bool = False


    writer = ModelType("acme/writer", version="2026.01.01.1", global_arguments=Args)
    writer.resource("state", lifetime="infinite")
    writer.resource("old", lifetime="infinite")
    writer.file("dump", content_type="application/octet-stream")


    @writer.method()
    def write(args, ctx: Context) -> None:
        ctx.write_resource("state", "state", {"value": args.value})
        seen = ctx.read_resource("state")  # its own write, before anything is published
        ctx.write_resource("state", "echo", {"seen": seen["value"]})
        with ctx.file_writer("dump", "dump") as w:
            for _ in range(64):
                w.write(b"x" * 4096)
        if args.fail:
            raise RuntimeError("asked to fail")


    @writer.method()
    def seed(args, ctx: Context) -> None:
        ctx.write_resource("old", "old", {"value": args.value})


    @writer.method()
    def forget(args, ctx: Context) -> None:
        ctx.delete_resource("old")
        if ctx.read_resource("old") is not None:
            raise RuntimeError("a staged delete should hide the name from the method")
'''


@pytest.fixture
def repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_type(repo, "writer.py", WRITER)
    p = repo / "models" / "acme" / "writer" / "wr.yaml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("type: acme/writer\nname: wr\n")
    return repo


def _one(repo, method: str, inputs: str = "{}", extra: str = "") -> None:
    write_workflow(repo, "w", f"""
        jobs:
          - name: j
            steps:
              - name: s
                {extra}
                task: {{type: model_method, modelIdOrName: wr, methodName: {method}, inputs: {inputs}}}
        """)


def _versions(repo) -> dict[str, list[tuple[int, bytes]]]:
    out: dict[str, list[tuple[int, bytes]]] = {}
    for _, meta, raw in visible_versions(repo):
        out.setdefault(meta["name"], []).append((meta["version"], raw))
    return {k: sorted(v) for k, v in out.items()}


def _staging_left(repo) -> list:
    root = repo / ".swamp" / "cache" / "staged-versions"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_a_steps_writes_are_numbered_after_it_ends_and_read_back_by_the_method_meanwhile(repo):
    _one(repo, "write", "{value: one}")
    r = run(repo, "w")
    s = steps(r)["j/s"]
    assert r.status == "succeeded", s.error
    found = _versions(repo)
    assert [v for v, _ in found["state"]] == [1] and json.loads(found["state"][0][1]) == {"value": "one"}
    assert json.loads(found["echo"][0][1]) == {"seen": "one"}
    assert found["dump"] == [(1, b"x" * 4096 * 64)]  # the streamed file, whole
    # the record names the numbers the versions were published at, never a provisional one
    assert sorted((a["name"], a["version"]) for a in s.dataArtifacts) == [("dump", 1), ("echo", 1), ("state", 1)]
    assert _staging_left(repo) == []  # nothing staged stays behind


def test_the_next_run_numbers_after_the_published_versions(repo):
    _one(repo, "write", "{value: one}")
    run(repo, "w")
    _one(repo, "write", "{value: two}")
    run(repo, "w")
    assert [(v, json.loads(raw)["value"]) for v, raw in _versions(repo)["state"]] == [(1, "one"), (2, "two")]


def test_a_failed_attempt_that_is_tried_again_takes_no_number(repo):
    _one(repo, "write", "{value: one, fail: true}", extra="retries: 1")
    r = run(repo, "w")
    assert r.status == "failed"
    # the last attempt failed too: what it wrote is kept (as a failed run's always was), numbered 1
    assert [v for v, _ in _versions(repo)["state"]] == [1]
    assert _staging_left(repo) == []


def test_a_delete_in_a_step_waits_for_the_lease_and_hides_the_name_from_the_method(repo):
    _one(repo, "seed", "{value: a}")
    run(repo, "w")
    assert [v for v, _ in _versions(repo)["old"]] == [1]
    _one(repo, "forget")
    r = run(repo, "w")
    assert r.status == "succeeded", steps(r)["j/s"].error
    assert "old" not in _versions(repo)


def test_the_staging_of_a_process_that_died_is_swept_and_a_live_ones_kept(repo):
    import os

    root = repo / ".swamp" / "cache" / "staged-versions"
    dead, live = root / "999999999-left-by-a-killed-run", root / f"{os.getppid()}-another-run-in-progress"
    for d in (dead, live):
        d.mkdir(parents=True)
        (d / "1").write_bytes(b"half a version")
    _one(repo, "write", "{value: one}")
    assert run(repo, "w").status == "succeeded"
    assert _staging_left(repo) == [live.name]
