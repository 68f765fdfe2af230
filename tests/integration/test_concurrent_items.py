"""forEach items on one model run up to the step's `concurrency` at once
(issue 25): the model's lease is held only while their versions are
numbered and published (docs/sync.md "Concurrent runs of one model"), so
eight `sleep 1` items with `concurrency: 4` overlap four at a time, and
their versions are still 1..8, each once, `latest` the highest."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers import (cli, make_repo, max_overlap, popen, spans, visible_versions, write_shell,
                           write_workflow)


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", models=1)


def each(n: int, *, sleep: float, step_extra: str = "", wf_extra: str = "") -> str:
    items = ", ".join(f"'i{k}'" for k in range(n))
    return f"""
        {wf_extra}
        jobs:
          - name: j
            steps:
              - name: each
                {step_extra}
                forEach: {{item: it, in: "${{{{ [{items}] }}}}"}}
                task:
                  type: model_method
                  modelIdOrName: w0
                  methodName: work
                  inputs: {{sleep: {sleep}, value: "${{{{ self.it }}}}"}}
        """


def test_eight_sleep_one_items_on_one_model_with_concurrency_four_run_four_at_a_time(repo):
    write_workflow(repo, "each", each(8, sleep=1, step_extra="concurrency: 4"))
    got = cli(repo, "workflow", "run", "each")
    assert got.code == 0, got
    assert got.data["status"] == "succeeded"
    found = spans(repo)
    # the items' own recorded start and end times: four at once, never more
    assert max_overlap(found) == 4
    assert sorted(v for *_, v in found) == list(range(1, 9))  # no number twice, none skipped
    assert sorted(value for _, _, value, _, _ in found) == [f"i{k}" for k in range(8)]
    latest = cli(repo, "data", "get", "w0", "span")
    assert latest.code == 0, latest
    assert latest.data["version"] == 8


def test_without_a_cap_the_items_of_one_model_still_run_one_after_another_in_plan_order(repo):
    write_workflow(repo, "each", each(4, sleep=0.1))
    assert cli(repo, "workflow", "run", "each").code == 0
    found = spans(repo)
    assert max_overlap(found) == 1
    assert [(v, value) for _, _, value, _, v in found] == [(k + 1, f"i{k}") for k in range(4)]


def test_a_workflow_cap_bounds_the_items_of_every_step(repo):
    write_workflow(repo, "each", each(6, sleep=0.3, step_extra="concurrency: 6", wf_extra="concurrency: 2"))
    assert cli(repo, "workflow", "run", "each").code == 0
    found = spans(repo)
    assert max_overlap(found) == 2
    assert sorted(v for *_, v in found) == list(range(1, 7))


def test_a_running_step_does_not_hold_its_models_lease_so_a_direct_run_of_it_goes_ahead(repo, tmp_path):
    marker = tmp_path / "started"
    write_shell(repo, "sh", f"""
        type: command/shell
        name: sh
        globalArguments:
          run: 'touch {marker}; sleep 2'
        """)
    write_workflow(repo, "slow", """
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: model_method, modelIdOrName: sh, methodName: execute}}
        """)
    proc = popen(repo, "workflow", "run", "slow")
    try:
        for _ in range(600):  # until the step's command runs (bounded: 30 s)
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), proc.communicate()
        direct = cli(repo, "model", "method", "run", "sh", "execute")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert direct.code == 0, direct
    assert proc.returncode == 0, err
    item = json.loads(out)["jobs"][0]["steps"][0]
    # the direct run started while the step's method still ran: it never waited for the model's lease
    assert direct.data["startedAt"] < item["completedAt"]
    logs = sorted(meta["version"] for _, meta, _ in visible_versions(repo) if meta["name"] == "log")
    assert logs == [1, 2]  # one number each, none twice
