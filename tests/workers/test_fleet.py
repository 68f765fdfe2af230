"""`swamp worker queue` and `swamp worker verify` (issue 26, worker fleet)
against a real tls:// scheduler and an enrolled worker: the queue shows
placed steps waiting for a worker to connect and behind a busy one, with
the workers that fit; verify has each worker answer with its version,
labels, certificate and datastore. A party without the team's certificate
is refused by both."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers import cli, init_repo, ok, popen, s3_setup_args, write_workflow
from tests.workers.cluster import Cluster, start_scheduler, team

import swamp

pytestmark = [pytest.mark.slow, pytest.mark.s3]

WAITING = """
jobs:
  - name: here
    steps:
      - name: nap-1
        placement: {labels: {region: eu}, queueTimeout: 60}
        task: {type: model_method, modelIdOrName: napper, methodName: execute}
      - name: nap-2
        placement: {labels: {region: eu}, queueTimeout: 60}
        task: {type: model_method, modelIdOrName: dozer, methodName: execute}
  - name: away
    steps:
      - name: far
        placement: {labels: {region: mars}, queueTimeout: 60}
        task: {type: model_method, modelIdOrName: roamer, methodName: execute}
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, seaweedfs):
    root = tmp_path_factory.mktemp("fleet")
    origin = init_repo(root / "origin")
    for model in ("napper", "dozer", "roamer"):  # one model each: steps of one model run one after another
        assert cli(origin, "model", "create", "command/shell", model, "--global-arg", "run=sleep 6").code == 0
    write_workflow(origin, "waiting", WAITING)
    setup = s3_setup_args(seaweedfs)
    ok(origin, "datastore", "setup", *setup)
    certs = team(root / "certs")
    scheduler, procs, log = start_scheduler(root, certs)
    c = Cluster(scheduler, origin, setup, root, log, certs, procs=list(procs))
    try:
        c.start_worker("eu-1", "region=eu", concurrency=1)
        yield c
    finally:
        c.stop()


def _queue(c: Cluster) -> list[dict]:
    r = cli(c.origin, "worker", "queue", *c.link)
    assert r.code == 0, r
    return r.data


def test_verify_has_each_worker_answer_with_its_version_labels_and_certificate(fleet):
    r = cli(fleet.origin, "worker", "verify", *fleet.link)
    assert r.code == 0, r
    [row] = r.data
    assert row["name"] == "eu-1" and row["ok"] and row["error"] is None
    assert row["labels"] == {"region": "eu"}
    assert row["version"] == swamp.__version__ and row["sameVersion"]
    assert row["certificate"] == "eu-1"  # the team certificate it presents
    assert row["datastore"].endswith(": ok")

    one = cli(fleet.origin, "worker", "verify", "eu-1", "--label", "region=eu", *fleet.link)
    assert one.code == 0 and [w["name"] for w in one.data] == ["eu-1"]
    none = cli(fleet.origin, "worker", "verify", "--label", "region=mars", *fleet.link)
    assert none.code != 0 and none.error["code"] == "not_found" and "region=mars" in none.error["error"]


def test_the_queue_shows_steps_waiting_and_the_workers_that_fit(fleet):
    assert _queue(fleet) == []
    run = popen(fleet.origin, "workflow", "run", "waiting", *fleet.link)
    try:
        deadline = time.monotonic() + 60
        while True:
            rows = _queue(fleet)
            states = {r["step"]: r for r in rows}
            far = states.get("waiting: far")
            behind = [r for r in rows if r["step"].startswith("waiting: nap-") and r["fittingWorkers"]]
            if far and behind:
                break
            assert time.monotonic() < deadline, rows
            time.sleep(0.5)
        # nobody carries region=mars: it waits for one to connect, and no worker fits
        assert far["labels"] == {"region": "mars"} and far["fittingWorkers"] == []
        assert far["state"] == "waiting for a fitting worker to connect" and far["since"]
        # one nap runs on eu-1 (concurrency 1); the other waits behind it (steps of two models run at once)
        [nap] = behind
        assert nap["labels"] == {"region": "eu"}
        assert nap["fittingWorkers"] == [{"name": "eu-1", "busy": True}]
        human = cli(fleet.origin, "worker", "queue", *fleet.link, json=False)
        assert "waiting: far" in human.stdout and "none connected" in human.stdout and "eu-1 (busy)" in human.stdout
    finally:
        run.kill()  # the dispatcher is gone: what it announced is dropped, and Dask forgets its steps
        run.communicate()
    deadline = time.monotonic() + 30
    while _queue(fleet):
        assert time.monotonic() < deadline, _queue(fleet)
        time.sleep(0.5)


def test_a_party_without_the_teams_certificate_sees_neither_queue_nor_workers(fleet, tmp_path):
    other = team(tmp_path / "other-team")  # a dispatcher certificate, of another CA
    for command in ("queue", "verify"):
        r = cli(fleet.origin, "worker", command, "--scheduler", fleet.scheduler, "--team-certs", str(other))
        assert r.code != 0, r
        assert r.error["code"] == "scheduler_unreachable", r
        assert "eu-1" not in r.stdout
    plain = cli(fleet.origin, "worker", "queue", "--scheduler", fleet.scheduler.replace("tls://", "tcp://"),
                "--team-certs", str(fleet.certs))
    assert plain.code == 2 and plain.error["code"] == "insecure_link"
    empty = tmp_path / "no-certs"
    empty.mkdir()
    missing = cli(fleet.origin, "worker", "verify", "--scheduler", fleet.scheduler, "--team-certs", str(empty))
    assert missing.code != 0 and "no team CA certificate" in missing.error["error"]
    assert json.dumps(missing.error).count("Traceback") == 0

