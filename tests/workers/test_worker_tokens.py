"""Enrolment tokens (docs/workers.md, "Enrolling with a token"): the CA
holder makes a one-time, expiring token; a new worker machine exchanges it
through the shared datastore for its team certificate, without copying a
file; a used, revoked, expired or tampered token is refused, and only the
CA holder makes or revokes one."""

from __future__ import annotations

import json
import stat
import sys

import pytest

from tests.fixtures.servers import _spawn, stop_processes, wait_until
from tests.helpers import _env, cli, init_repo, invoke, ok, s3_setup_args
from tests.workers.cluster import start_scheduler, team

from swamp.util import clock


def _create(repo, ca_dir, name, *args):
    r = cli(repo, "worker", "token", "create", name, "--dir", str(ca_dir), *args)
    assert r.code == 0, r
    return r.data


def _enrol(repo, folder, token, **kw):
    return cli(repo, "worker", "enrol", "--token", token, "--team-certs", str(folder), **kw)


def _doc(repo, name) -> dict:
    [path] = list(repo.glob(f".swamp/**/worker-tokens/{name}.json")) or list(repo.glob(f"**/worker-tokens/{name}.json"))
    return json.loads(path.read_text())


@pytest.fixture()
def shared(tmp_path, seaweedfs):
    """The CA holder's checkout and a new worker machine's, on one bucket;
    the CA's key only in the holder's folder."""
    setup = s3_setup_args(seaweedfs)
    holder, machine = init_repo(tmp_path / "holder"), init_repo(tmp_path / "machine")
    for repo in (holder, machine):
        ok(repo, "datastore", "setup", *setup)
    ca = team(tmp_path / "ca")
    return holder, machine, ca, tmp_path


@pytest.mark.s3
def test_a_token_enrols_a_machine_once_through_the_shared_datastore(shared):
    holder, machine, ca, root = shared
    row = _create(holder, ca, "eu-2", "--duration", "1h")
    token = row["token"]
    assert token.startswith("swamp-enrol-") and row["state"] == "pending"

    # The datastore keeps the token's hash, never the token.
    listing = cli(machine, "worker", "token", "list")
    assert listing.code == 0 and [r["name"] for r in listing.data] == ["eu-2"]
    assert token not in listing.stdout
    stored = json.dumps(_doc(holder, "eu-2"))
    assert token not in stored and "BEGIN" not in stored  # the hash, and the certificate only sealed

    folder = root / "machine-certs"
    r = _enrol(machine, folder, token)
    assert r.code == 0, r
    assert r.data["name"] == "eu-2" and r.data["state"] == "used"
    for name in ("ca.pem", "eu-2.pem", "eu-2-key.pem"):
        assert (folder / name).exists()
    assert not (folder / "ca-key.pem").exists()  # the CA's key never leaves its holder
    assert stat.S_IMODE((folder / "eu-2-key.pem").stat().st_mode) == 0o600
    listed = {c["name"]: c for c in cli(machine, "worker", "cert", "list", "--dir", str(folder)).data}
    assert listed["eu-2"]["signedByTeamCa"] and listed["eu-2"]["key"]

    # Once: a second machine with the same token is refused, saying who used it.
    again = _enrol(holder, root / "other-certs", token)
    assert again.code != 0 and again.error["code"] == "token_refused"
    assert "already used, by user:" in again.error["error"]
    assert not (root / "other-certs" / "eu-2-key.pem").exists()
    states = {r["name"]: r for r in cli(holder, "worker", "token", "list").data}
    assert states["eu-2"]["state"] == "used" and states["eu-2"]["enrolledBy"].startswith("user:")
    # ...and nothing that opens the certificate is left in the datastore
    assert "sealed" not in _doc(holder, "eu-2")


@pytest.mark.s3
def test_only_the_ca_holder_creates_or_revokes_a_token(shared):
    holder, machine, ca, root = shared
    token = _create(holder, ca, "eu-3")["token"]
    enrolled = root / "machine-certs"  # a worker's folder: ca.pem and its own certificate, no CA key
    assert _enrol(machine, enrolled, token).code == 0

    made = cli(machine, "worker", "token", "create", "intruder", "--dir", str(enrolled))
    assert made.code != 0 and "no team CA (with its key)" in made.error["error"]
    revoked = cli(machine, "worker", "token", "revoke", "eu-3", "--dir", str(enrolled))
    assert revoked.code != 0 and "no team CA (with its key)" in revoked.error["error"]

    # Another team's CA holder is not this token's CA holder either.
    other = team(root / "other-ca")
    second = _create(holder, ca, "eu-4")["token"]
    refused = cli(machine, "worker", "token", "revoke", "eu-4", "--dir", str(other))
    assert refused.code != 0 and refused.error["code"] == "token_refused"
    assert _enrol(machine, root / "eu-4-certs", second).code == 0  # still usable: nothing was revoked


@pytest.mark.s3
def test_a_revoked_token_is_refused_by_every_peer_saying_who(shared):
    holder, machine, ca, root = shared
    token = _create(holder, ca, "eu-5")["token"]
    r = cli(holder, "worker", "token", "revoke", "eu-5", "--dir", str(ca))
    assert r.code == 0 and r.data["state"] == "revoked" and r.data["revokedBy"].startswith("user:")
    refused = _enrol(machine, root / "machine-certs", token)
    assert refused.code != 0 and refused.error["code"] == "token_refused"
    assert "revoked by user:" in refused.error["error"]
    assert not (root / "machine-certs" / "eu-5-key.pem").exists()
    assert "sealed" not in _doc(machine, "eu-5")


def test_an_expired_wrong_or_tampered_token_is_refused(tmp_path):
    repo = init_repo(tmp_path / "r")
    ca = team(tmp_path / "ca")
    created = invoke(repo, "worker", "token", "create", "eu-6", "--dir", str(ca), "--duration", "30m")
    assert created.code == 0, created
    token = created.data["token"]

    wrong = invoke(repo, "worker", "enrol", "--token", "swamp-enrol-" + "A" * 43, "--team-certs", str(tmp_path / "w"))
    assert wrong.code != 0 and wrong.error["code"] == "token_refused"
    garbage = invoke(repo, "worker", "enrol", "--token", "not-a-token", "--team-certs", str(tmp_path / "w"))
    assert garbage.code != 0 and "not a worker enrolment token" in garbage.error["error"]
    empty = invoke(repo, "worker", "enrol", "--team-certs", str(tmp_path / "w"))
    assert empty.code != 0 and "no enrolment token" in empty.error["error"]

    # Past its expiry (the clock moved on an hour): refused, and listed as expired.
    real = clock.now()
    clock.set_clock(lambda: real + 3600)
    try:
        late = invoke(repo, "worker", "enrol", "--token", token, "--team-certs", str(tmp_path / "w"))
        assert late.code != 0 and "expired at" in late.error["error"]
        assert invoke(repo, "worker", "token", "list").data[0]["state"] == "expired"
    finally:
        clock.set_clock(None)

    # Someone with write access to the datastore pushes the expiry back: the bundle no longer opens.
    path = repo / ".swamp" / "worker-tokens" / "eu-6.json"
    if not path.exists():
        [path] = list(repo.glob("**/worker-tokens/eu-6.json"))
    doc = json.loads(path.read_text())
    doc["expiresAt"] = "2999-01-01T00:00:00.000Z"
    path.write_text(json.dumps(doc))
    tampered = invoke(repo, "worker", "enrol", "--token", token, "--team-certs", str(tmp_path / "w"))
    assert tampered.code != 0 and "does not open" in tampered.error["error"]
    assert not (tmp_path / "w" / "eu-6-key.pem").exists()


def test_a_folder_that_trusts_another_ca_is_not_switched_to_the_tokens(tmp_path):
    repo = init_repo(tmp_path / "r")
    ca = team(tmp_path / "ca")
    token = invoke(repo, "worker", "token", "create", "eu-7", "--dir", str(ca)).data["token"]
    theirs = team(tmp_path / "theirs")  # this machine already belongs to another team
    r = invoke(repo, "worker", "enrol", "--token", token, "--team-certs", str(theirs))
    assert r.code != 0 and "already trusts another team CA" in r.error["error"]
    # the refusal came before the token was spent
    assert invoke(repo, "worker", "token", "list").data[0]["state"] == "pending"


@pytest.mark.s3
@pytest.mark.slow
def test_worker_start_with_a_token_enrols_and_joins_the_scheduler(shared):
    holder, machine, ca, root = shared
    scheduler, procs, log = start_scheduler(root, ca)
    try:
        token = _create(holder, ca, "eu-8")["token"]
        folder = root / "machine-certs"
        worker_log = root / "worker.log"
        # the token from the environment: not on a command line other users of the machine can read
        args = [sys.executable, "-m", "swamp", "worker", "start", "--scheduler", scheduler, "--team-certs",
                str(folder), "--label", "region=eu", "--repo-dir", str(machine)]
        proc = _spawn(args, worker_log, env=_env({"SWAMP_WORKER_TOKEN": token}))
        procs.append(proc)

        def joined():
            r = cli(holder, "worker", "list", "--scheduler", scheduler, "--team-certs", str(ca))
            assert r.code == 0 and "eu-8" in {w["name"] for w in r.data}, r

        wait_until("the enrolled worker", joined, [proc], worker_log)
        assert (folder / "eu-8-key.pem").exists()
    finally:
        stop_processes(procs)



def test_a_restarted_worker_with_its_used_token_starts_with_the_certificate_it_has(tmp_path):
    repo = init_repo(tmp_path / "r")
    ca = team(tmp_path / "ca")
    token = invoke(repo, "worker", "token", "create", "eu-9", "--dir", str(ca)).data["token"]
    folder = tmp_path / "w"
    first = invoke(repo, "worker", "enrol", "--token", token, "--team-certs", str(folder))
    assert first.code == 0 and first.data["installed"]["name"] == "eu-9"
    key = (folder / "eu-9-key.pem").read_bytes()
    again = invoke(repo, "worker", "enrol", "--token", token, "--team-certs", str(folder))  # a service restarting
    assert again.code == 0 and again.data["installed"] is None and again.data["state"] == "used"
    assert (folder / "eu-9-key.pem").read_bytes() == key  # nothing issued or replaced
    (folder / "eu-9-key.pem").unlink()  # without the certificate it enrolled, the token is spent
    spent = invoke(repo, "worker", "enrol", "--token", token, "--team-certs", str(folder))
    assert spent.code != 0 and "already used" in spent.error["error"]
