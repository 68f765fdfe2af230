"""Three peers on SeaweedFS each run a workflow whose forEach items on one
model run at once (`concurrency: 3`), all three at the same time (issue
25): every item's version is numbered under the model's lease after the
pull that followed taking it, so no number holds two items' data, each
item is told the number its data is at on every peer, and `latest`, read
meanwhile, never goes back (docs/sync.md "Concurrent runs of one model")."""

from __future__ import annotations

import json
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import (WORK_TYPE, cli, init_repo, ok, s3_setup_args, visible_versions, write_model,
                           write_type, write_workflow)

pytestmark = pytest.mark.slow

PEERS = ("a", "b", "c")
ITEMS = 5


def _workflow(repo, who: str) -> None:
    items = ", ".join(f"'{who}{k}'" for k in range(ITEMS))
    write_workflow(repo, "each", f"""
        jobs:
          - name: j
            steps:
              - name: each
                concurrency: 3
                forEach: {{item: it, in: "${{{{ [{items}] }}}}"}}
                task:
                  type: model_method
                  modelIdOrName: w0
                  methodName: work
                  inputs: {{sleep: 0.3, value: "${{{{ self.it }}}}"}}
        """)


@pytest.fixture
def peers(tmp_path, seaweedfs):
    args = s3_setup_args(seaweedfs)
    first = init_repo(tmp_path / "a")
    write_type(first, "work.py", WORK_TYPE)
    write_model(first, "w0")
    ok(first, "datastore", "setup", *args)
    out = {"a": first}
    for who in PEERS[1:]:
        repo = init_repo(tmp_path / who)
        for part in ("models", "extensions"):
            shutil.copytree(first / part, repo / part, dirs_exist_ok=True)
        ok(repo, "datastore", "setup", *args)
        out[who] = repo
    for who, repo in out.items():
        _workflow(repo, who)
    return out


def test_three_peers_running_concurrent_items_on_one_model_never_share_a_number(peers):
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:  # `latest` as a reader on a peer sees it while the runs go on
        while not done.is_set():
            got = cli(peers["c"], "data", "get", "w0", "span")
            if got.code == 0:
                seen.append(got.data["version"])

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with ThreadPoolExecutor(len(PEERS)) as pool:
            runs = dict(zip(PEERS, pool.map(lambda who: cli(peers[who], "workflow", "run", "each",
                                                            timeout=240), PEERS)))
    finally:
        done.set()
        watcher.join(60)
    for who, got in runs.items():
        assert got.code == 0 and got.data["status"] == "succeeded", (who, got)
    for _ in range(2):  # everyone has everything
        for repo in peers.values():
            ok(repo, "datastore", "sync")

    told = {}  # item -> the version its run record names
    for got in runs.values():
        for step in got.data["jobs"][0]["steps"]:
            [art] = [a for a in step["dataArtifacts"] if a["name"] == "span"]
            told[step["item"]] = art["version"]
    total = ITEMS * len(PEERS)
    assert sorted(told.values()) == list(range(1, total + 1)), told  # no number twice, none skipped
    for who, repo in peers.items():
        held = {meta["version"]: json.loads(raw)["value"] for _, meta, raw in visible_versions(repo)
                if meta["name"] == "span"}
        assert sorted(held) == list(range(1, total + 1)), (who, sorted(held))
        for item, version in told.items():
            assert held[version] == item, f"{item} was told {version}, which holds {held[version]} on {who}"
        assert ok(repo, "data", "get", "w0", "span")["version"] == total
    assert seen == sorted(seen), f"latest went back: {seen}"


def test_an_offline_run_refuses_its_steps_before_their_methods_run(peers):
    got = cli(peers["a"], "workflow", "run", "each", "--offline", timeout=120)
    assert got.code != 0
    steps = got.data["jobs"][0]["steps"]
    assert steps and all(s["status"] == "failed" and "--offline" in s["error"] for s in steps), steps
    assert not [m for _, m, _ in visible_versions(peers["a"]) if m["name"] == "span"]  # no method ran
