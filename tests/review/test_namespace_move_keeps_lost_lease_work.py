"""Review (round after e212c4b): nothing is lost (app/namespaces.py).

Hole: what was written under a lost lease is kept in
`.swamp/.sync/lost-lease/...` (docs/sync.md "Leases": the command's error
names that folder, so the user can get it back). `namespace set`,
`namespace migrate` ("this checkout's runtime state ... is published into
NAME") and `datastore setup` onto another remote drop the whole `.sync/`
directory to start the cache afresh (app/namespaces.set_namespace,
app/datastore._claim_sync_state), and that folder with it, without a word:
the unpublished-changes check does not count it."""

from __future__ import annotations

import pytest

from tests.helpers import init_repo, ok

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _setup(seaweedfs, prefix: str, namespace: str) -> list[str]:
    return ["s3", "--bucket", seaweedfs.bucket, "--prefix", prefix, "--endpoint-url", seaweedfs.endpoint_url,
            "--region", "us-east-1", "--namespace", namespace]


@pytest.mark.parametrize("how", ["set", "migrate"])
def test_moving_to_another_namespace_keeps_what_a_lost_lease_kept_aside(tmp_path, seaweedfs, how):
    repo = init_repo(tmp_path / "r")
    ok(repo, "datastore", "setup", *_setup(seaweedfs, seaweedfs.new_prefix(), "team-a"))
    # as the engine leaves it when a command's lease was lost (fencing.py _quarantine)
    kept = repo / ".swamp" / ".sync" / "lost-lease" / "20261130T230000Z-model-x-abc123" / "data" / "raw"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"the only copy of a run's output")
    ok(repo, "datastore", "namespace", how, "team-b", "-y")
    assert kept.is_file() and kept.read_bytes() == b"the only copy of a run's output"
