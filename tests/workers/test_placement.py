"""Placement without a cluster: labels, which worker fits, the schema, and
a placed step in a run that has no scheduler."""

from __future__ import annotations

import textwrap

import pytest

from swamp.errors import UsageError
from swamp.workers.placement import fits, labels_of, parse_labels, step_resources, worker_resources
from tests.helpers import cli, init_repo


def test_labels_become_resources_and_back():
    labels = parse_labels(["region=eu", "gpu=a100"])
    res = worker_resources(labels, 3)
    assert res == {"region=eu": 3.0, "gpu=a100": 3.0, "swamp": 3.0}
    assert labels_of(res) == labels
    assert step_resources({"region": "eu"}) == {"region=eu": 1.0, "swamp": 1.0}


@pytest.mark.parametrize("bad", ["region", "=eu", "region=", "swamp=yes", "a b=c"])
def test_a_malformed_label_is_a_usage_error(bad):
    with pytest.raises(UsageError):
        parse_labels([bad])


def test_which_worker_fits():
    eu = {"name": "eu-1", "resources": worker_resources({"region": "eu"}, 1)}
    plain_dask = {"name": "x", "resources": {"region=eu": 1}}
    assert fits(eu, {"region": "eu"}, None)
    assert not fits(eu, {"region": "us"}, None)
    assert fits(eu, {}, "eu-1") and not fits(eu, {}, "eu-2")
    assert not fits(plain_dask, {"region": "eu"}, None)  # not a swamp worker


PLACED = """
name: placed
jobs:
  - name: j
    steps:
      - name: away
        placement: {labels: {region: eu}, queueTimeout: 5}
        task: {type: model_method, modelIdOrName: hello, methodName: execute}
"""


def test_a_placed_step_without_a_scheduler_fails_clearly(tmp_path):
    repo = init_repo(tmp_path / "r")
    assert cli(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hi").code == 0
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-placed.yaml").write_text(textwrap.dedent(PLACED).lstrip())
    r = cli(repo, "workflow", "run", "placed")
    assert r.code == 1 and not r.stdout.strip()  # refused before it started (tests/workers/test_placement_checked_first.py)
    assert r.error["code"] == "no_scheduler" and "--scheduler" in r.error["hint"], r


def test_an_unknown_placement_key_is_refused(tmp_path):
    repo = init_repo(tmp_path / "r")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-placed.yaml").write_text(
        textwrap.dedent(PLACED).lstrip().replace("queueTimeout: 5", "queue: 5"))
    r = cli(repo, "workflow", "validate", "placed")
    assert r.code != 0 and "queue" in (r.stdout + r.stderr)
