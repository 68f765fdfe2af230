"""The worker commands' use cases (app/worker_fleet.py, app/team_certs.py)
decide what the CLI used to: a wrong argument is refused before anything
is enrolled, issued or connected to, and the defaults stay the defaults.
The commands themselves are tested end to end in tests/workers/."""

from __future__ import annotations

import pytest

from swamp.app import team_certs, worker_fleet
from swamp.errors import UsageError


def test_no_link_option_given_is_the_defaults_and_any_one_given_is_kept():
    assert worker_fleet.link_settings() is None
    link = worker_fleet.link_settings(insecure=True)
    assert link is not None and link.insecure and link.certs_dir is None and link.cert_name is None
    assert worker_fleet.link_settings(cert_name="eu-1").cert_name == "eu-1"


class _NoRepo:
    """A repository that must not be touched: any use of it fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"the repository was used ({name}) before the arguments were checked")


def test_a_wrong_label_is_refused_before_a_token_is_redeemed():
    with pytest.raises(UsageError, match="is not KEY=VALUE"):
        worker_fleet.worker_start(_NoRepo(), "tls://127.0.0.1:1", labels=["region"], token="swamp-enrol-x")
    with pytest.raises(UsageError, match="not a label name"):
        worker_fleet.worker_start(_NoRepo(), "tls://127.0.0.1:1", labels=["swamp=1"])


def test_a_worker_start_without_a_token_keeps_its_arguments():
    plan = worker_fleet.worker_start(_NoRepo(), "tls://127.0.0.1:1", labels=["region=eu", "gpu=yes"],
                                     concurrency=2, name="eu-1", host="127.0.0.1")
    assert (plan.labels, plan.concurrency, plan.name, plan.host, plan.link) == (
        {"region": "eu", "gpu": "yes"}, 2, "eu-1", "127.0.0.1", None)


def test_verify_refuses_a_wrong_label_before_it_connects():
    with pytest.raises(UsageError, match="is not KEY=VALUE"):
        worker_fleet.verify("tls://127.0.0.1:1", labels=["=eu"])


def test_a_token_for_more_than_one_machine_is_refused_before_a_certificate_is_issued(tmp_path):
    with pytest.raises(UsageError, match="enrols one machine"):
        team_certs.create_token(_NoRepo(), "eu-2", folder=tmp_path, max_enrollments="3")
    assert list(tmp_path.iterdir()) == []


def test_the_team_certs_folder_is_the_one_given_else_the_environments(tmp_path, monkeypatch):
    monkeypatch.setenv("SWAMP_TEAM_CERTS", str(tmp_path / "team"))
    assert team_certs.folder_of(None) == tmp_path / "team"
    assert team_certs.folder_of(tmp_path / "mine") == tmp_path / "mine"
