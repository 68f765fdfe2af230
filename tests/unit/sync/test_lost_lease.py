"""Review finding: what a method wrote under a lease it lost is published
later anyway, by the next push from the same cache (SYNC.md "Leases": a lost
lease means publish nothing)."""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest

from tests.helpers import init_repo, invoke, write_type

pytestmark = pytest.mark.slow

TTL_MS = 1500

SLOW_TYPE = '''
    import time
    from pathlib import Path
    from pydantic import BaseModel
    from swamp import Context, ModelType

    class Args(BaseModel):
        gate: str = ""

    slow = ModelType("acme/slow", version="2026.01.01.1", description="waits for a file")
    slow.resource("out", lifetime="infinite")

    @slow.method(description="write, then wait for the gate file", arguments=Args)
    def run(args, ctx: Context) -> None:
        ctx.write_resource("out", "out", {"who": "lost-lease"})
        deadline = time.time() + 30
        while not Path(args.gate).exists() and time.time() < deadline:
            time.sleep(0.05)
'''


def ok(repo, *args):
    r = invoke(repo, *args)
    assert r.code == 0, r
    return r.data


@pytest.fixture
def short_leases(monkeypatch):
    from swamp.datastore.sync.engine import SyncEngine

    fn = SyncEngine.lease.__wrapped__
    monkeypatch.setattr(fn, "__kwdefaults__", {**fn.__kwdefaults__, "ttl_ms": TTL_MS})


def test_what_was_written_under_a_lost_lease_is_never_published(tmp_path, seaweedfs, short_leases):
    from swamp.datastore.objectstore.factory import open_store
    from swamp.datastore.sync.layout import Layout

    prefix = seaweedfs.new_prefix()
    args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", prefix, "--endpoint-url", seaweedfs.endpoint_url,
            "--region", "us-east-1"]
    a = init_repo(tmp_path / "a")
    write_type(a, "slow.py", SLOW_TYPE)
    model = ok(a, "model", "create", "acme/slow", "s")
    ok(a, "datastore", "setup", *args)
    b = init_repo(tmp_path / "b")
    shutil.copytree(a / "models", b / "models", dirs_exist_ok=True)
    shutil.copytree(a / "extensions", b / "extensions", dirs_exist_ok=True)
    ok(b, "datastore", "setup", *args)

    store = open_store({"type": "s3", "bucket": seaweedfs.bucket, "prefix": prefix,
                        "endpoint_url": seaweedfs.endpoint_url, "region": "us-east-1"})
    key = Layout("default").lease(f"model/acme/slow/{model['id']}")
    gate = tmp_path / "gate"

    def steal():
        # Another peer takes the lease over (as after a stalled heartbeat).
        deadline = time.time() + 30
        while store.head(key) is None and time.time() < deadline:
            time.sleep(0.02)
        store.delete(key)
        store.put(key, json.dumps({"holder": "thief", "nonce": "x", "ttlMs": 60000}).encode(),
                  if_none_match=True)
        time.sleep(TTL_MS / 1000)  # the holder's heartbeat notices
        store.delete(key)
        gate.write_text("go")

    thief = threading.Thread(target=steal)
    thief.start()
    r = invoke(a, "model", "method", "run", "s", "run", "--input", f"gate={gate}")
    thief.join()
    assert r.code == 1 and r.error["code"] == "lease_lost", r
    # What it wrote is kept, local only, where the error says (Fencing.quarantine).
    assert ".sync/lost-lease/" in r.error["hint"], r.error
    kept = [p for p in (a / ".swamp" / ".sync" / "lost-lease").rglob("*") if p.is_file()]
    assert any("/outputs/" in str(p) for p in kept) and any("/data/" in str(p) for p in kept), kept

    # A's next, unrelated, push from the same cache.
    ok(a, "datastore", "sync")
    assert invoke(b, "data", "versions", "s", "out").code == 1, "published under a lost lease"
    runs = ok(b, "model", "output", "search")
    assert [x["status"] for x in runs if x["modelName"] == "s"] != ["succeeded"], \
        "a run whose command failed with lease_lost is published as succeeded"
