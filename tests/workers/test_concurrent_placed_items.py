"""Placed forEach items on one model run at once on a worker (issue 25): a
worker's step, like a local one, runs its method without the model's
lease and takes it only to number its versions (app/publishing_leases.py),
so a worker of concurrency 2 runs two items of `hello` together, and
their versions are still contiguous, each once."""

from __future__ import annotations

import pytest

from tests.helpers import cli, max_overlap

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _versions(cluster) -> list[int]:
    got = cli(cluster.origin, "data", "versions", "hello", "result")
    return [v["version"] for v in got.data] if got.code == 0 else []  # none yet in a fresh cluster


def test_placed_items_on_one_model_overlap_on_a_worker_and_number_their_versions_once(cluster):
    spans = cluster.root / "placed-items.spans"
    # each item's command writes its own start and end (seconds since the epoch) where this test reads them
    command = f"s=$(date +%s.%N); sleep 1; echo $s $(date +%s.%N) >> {spans}"
    (cluster.origin / "workflows" / "workflow-placed-items.yaml").write_text(f"""name: placed-items
jobs:
  - name: j
    steps:
      - name: "item-${{{{ self.n }}}}"
        concurrency: 2
        forEach: {{item: n, in: "${{{{ [1, 2, 3, 4] }}}}"}}
        placement: {{labels: {{region: eu}}, queueTimeout: 30}}
        task: {{type: model_method, modelIdOrName: hello, methodName: execute, inputs: {{run: '{command}'}}}}
""")
    before = _versions(cluster)
    run = cluster.run("placed-items")
    assert run["status"] == "succeeded", run
    steps = [s for j in run["jobs"] for s in j["steps"]]
    assert len(steps) == 4 and all(s["worker"] == "eu-1" for s in steps), steps
    intervals = [tuple(float(x) for x in line.split()) for line in spans.read_text().splitlines()]
    assert len(intervals) == 4
    assert max_overlap(intervals) == 2  # two at once on the worker of concurrency 2, never waiting on the lease
    after = _versions(cluster)
    top = max(before, default=0)
    assert sorted(set(after) - set(before)) == list(range(top + 1, top + 5))  # four new numbers, each once
