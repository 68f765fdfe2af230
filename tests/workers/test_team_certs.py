"""The team's certificates (`swamp worker ca create`, `cert issue|list`)
and the link rules that need no cluster: a tcp:// scheduler is refused
without the explicit flag, and where a worker listens."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.helpers import cli, init_repo

from swamp.workers import links, team_certs


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_ca_and_certificates_keep_their_keys_private_whatever_the_umask(tmp_path):
    folder = tmp_path / "team"
    old = os.umask(0)
    try:
        ca = cli(None, "worker", "ca", "create", "--dir", str(folder))
        issued = cli(None, "worker", "cert", "issue", "eu-1", "--dir", str(folder))
    finally:
        os.umask(old)
    assert ca.code == 0 and issued.code == 0, (ca, issued)
    assert _mode(folder) == 0o700
    assert _mode(folder / "ca-key.pem") == 0o600 and _mode(folder / "eu-1-key.pem") == 0o600
    assert ca.data["key"] == str(folder / "ca-key.pem")
    assert issued.data["signedByTeamCa"] is True and issued.data["name"] == "eu-1"


def test_cert_list_is_sorted_and_tells_a_certificate_of_another_ca(tmp_path):
    team, other = tmp_path / "team", tmp_path / "other"
    team_certs.create_ca(team)
    team_certs.create_ca(other)
    for name in ("zeta", "dispatcher", "alpha"):
        team_certs.issue(team, name)
    team_certs.issue(other, "stranger")
    for suffix in (".pem", "-key.pem"):  # a certificate copied in from another team
        (team / f"stranger{suffix}").write_bytes((other / f"stranger{suffix}").read_bytes())
    rows = cli(None, "worker", "cert", "list", "--dir", str(team)).data
    assert [r["name"] for r in rows] == ["ca", "alpha", "dispatcher", "stranger", "zeta"]
    assert {r["name"]: r["signedByTeamCa"] for r in rows}["stranger"] is False
    assert all(r["signedByTeamCa"] for r in rows if r["name"] != "stranger")


def test_a_second_ca_a_certificate_without_a_ca_and_a_bad_name_are_clear_errors(tmp_path):
    folder = tmp_path / "team"
    r = cli(None, "worker", "cert", "issue", "eu-1", "--dir", str(folder))
    assert r.code == 1 and r.error["code"] == "not_found" and "ca create" in r.error["hint"], r
    assert cli(None, "worker", "ca", "create", "--dir", str(folder)).code == 0
    again = cli(None, "worker", "ca", "create", "--dir", str(folder))
    assert again.code == 1 and again.error["code"] == "conflict", again
    for bad in ("ca", "x-key", "../up", "a b"):
        r = cli(None, "worker", "cert", "issue", bad, "--dir", str(folder))
        assert r.code == 2 and r.error["code"] == "usage", (bad, r)
    assert cli(None, "worker", "cert", "issue", "eu-1", "--dir", str(folder)).code == 0
    twice = cli(None, "worker", "cert", "issue", "eu-1", "--dir", str(folder))
    assert twice.code == 1 and "--replace" in twice.error["hint"]
    assert cli(None, "worker", "cert", "issue", "eu-1", "--dir", str(folder), "--replace").code == 0
    assert not list(folder.glob("*.tmp"))


def test_a_key_others_can_read_is_not_used(tmp_path):
    team_certs.create_ca(tmp_path)
    team_certs.issue(tmp_path, "dispatcher")
    os.chmod(tmp_path / "dispatcher-key.pem", 0o644)
    with pytest.raises(Exception) as got:
        links.security_for("tls://127.0.0.1:1", links.LinkSettings(certs_dir=tmp_path), default_name="dispatcher")
    assert "chmod 600" in got.value.hint


def test_a_missing_certificate_says_how_to_enrol(tmp_path):
    team_certs.create_ca(tmp_path)
    r = cli(init_repo(tmp_path / "repo"), "worker", "list", "--scheduler", "tls://127.0.0.1:1",
            "--team-certs", str(tmp_path))
    assert r.code == 1 and r.error["code"] == "not_found", r
    assert "swamp worker cert issue dispatcher" in r.error["hint"]


@pytest.mark.parametrize("args, flag", [
    (["workflow", "run", "anything"], "--insecure-scheduler"),
    (["model", "method", "run", "hello", "execute", "--placement", "region=eu"], "--insecure-scheduler"),
    (["serve", "--port", "0"], "--insecure-scheduler"),
    (["worker", "list"], "--insecure"),
    (["worker", "start", "--label", "region=eu"], "--insecure"),
])
@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "127.0.0.1:1"])
def test_a_plain_scheduler_link_is_refused_without_the_explicit_flag(tmp_path, args, flag, address):
    repo = init_repo(tmp_path / "repo")
    r = cli(repo, *args, "--scheduler", address)
    assert r.code == 2, r
    assert r.error["code"] == "insecure_link", r
    assert "neither authenticated nor encrypted" in r.error["error"] and flag in r.error["hint"]


def test_the_insecure_flag_lets_a_plain_link_through_with_a_loud_warning(tmp_path):
    r = cli(init_repo(tmp_path / "repo"), "worker", "list", "--scheduler", "tcp://127.0.0.1:1", "--insecure",
            timeout=60)
    warning, error = r.stderr.strip().splitlines()
    assert warning.startswith("warning: INSECURE link to tcp://127.0.0.1:1")
    assert json.loads(error)["code"] == "scheduler_unreachable"  # it tried: nothing listens there


@pytest.mark.parametrize("address", ["tls://127.0.0.1:8786", "tls://localhost:8786", "tcp://127.0.0.2:1"])
def test_a_worker_listens_on_loopback_for_a_scheduler_on_this_machine(address):
    assert links.bind_host(address) in ("127.0.0.1", "::1")


def test_a_worker_never_listens_on_every_interface_by_default():
    try:
        host = links.bind_host("tls://192.0.2.10:8786")  # TEST-NET-1: routed by the default route, if any
    except Exception as e:  # no route on this machine: a clear error naming --host
        assert "--host" in e.hint
        return
    assert host not in ("0.0.0.0", "::", "")


def test_keys_are_not_written_where_git_would_commit_them(tmp_path):
    import subprocess

    checkout = init_repo(tmp_path / "repo")
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    r = cli(None, "worker", "ca", "create", "--dir", str(checkout / "certs"))
    assert r.code == 1 and r.error["code"] == "conflict" and ".gitignore" in r.error["hint"], r
    assert not (checkout / "certs").exists()
    ignored = checkout / ".swamp" / "team-certs"  # swamp's own .gitignore keeps .swamp/ out of git
    assert cli(None, "worker", "ca", "create", "--dir", str(ignored)).code == 0
    assert cli(None, "worker", "cert", "issue", "eu-1", "--dir", str(ignored)).code == 0


def test_a_scheduler_on_a_taken_port_is_a_clear_error(tmp_path):
    import socket

    team_certs.create_ca(tmp_path)
    team_certs.issue(tmp_path, "scheduler")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = cli(None, "worker", "scheduler", "--port", str(port), "--team-certs", str(tmp_path), timeout=60)
    assert r.code == 1, r
    err = json.loads(r.stderr.strip().splitlines()[-1])  # after Dask's own log lines
    assert "cannot listen on tls://127.0.0.1:" in err["error"] and "--port" in err["hint"]
    assert "Traceback" not in r.stderr
