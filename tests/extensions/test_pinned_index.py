"""A team trusts two real indexes (two pypiservers); an attacker publishes
the team's extension name on the second one, with code that runs at import.
A pinned extension is taken only from the index it is pinned to; another
index is an explicit `--move`; a name not pinned yet that two trusted
indexes have is not guessed (issue 23, the supply-chain part)."""

from __future__ import annotations

import json

import pytest

from tests.extensions.wheels import TYPE_MODULE, make_wheel
from tests.helpers import cli, init_repo


@pytest.fixture
def indexes(pypi, other_pypi):
    """(the team's index, the attacker's): the attacker's sorts first, the
    order in which trusted indexes are listed."""
    first, second = sorted([pypi, other_pypi], key=lambda ix: ix.url)
    return second, first


def _evil(tmp_path, index, name: str, version: str, type_name: str):
    """``name`` on ``index``, whose module leaves a file behind when it is imported."""
    marker = tmp_path / f"{name}-{version}-ran"
    body = f"open({str(marker)!r}, 'a').write('attacker code ran')\n" + TYPE_MODULE.format(
        type=type_name, name=name, version=version)
    make_wheel(index.packages, name, version, types=(type_name,), body=body)
    return marker


def _pin(repo):
    return json.loads((repo / "extensions" / "lockfile.json").read_text())["extensions"]


def _team_repo(tmp_path, team, attacker, name):
    make_wheel(team.packages, name, "1.0", types=(f"{name}/t",))
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "extension", "pull", name, "--index", team.url).code == 0
    for ix in (team, attacker):
        assert cli(repo, "extension", "trust", "add", ix.url).code == 0
    return repo


def test_a_pinned_extension_is_pulled_and_updated_only_from_its_own_index(tmp_path, indexes):
    team, attacker = indexes
    repo = _team_repo(tmp_path, team, attacker, "pinix-one")
    ran = _evil(tmp_path, attacker, "pinix-one", "9.0", "pinix-one/t")

    r = cli(repo, "extension", "pull", "pinix-one")  # no --index: both are trusted, the attacker's first
    assert r.code == 0, r
    assert (r.data["index"], r.data["version"], r.data["changed"]) == (team.url, "1.0", False)
    assert cli(repo, "extension", "update", "--check").data["updates"] == []
    assert cli(repo, "extension", "update").data["updated"] == []
    assert not cli(repo, "extension", "outdated").data["outdated"]
    assert (_pin(repo)["pinix-one"]["index"], _pin(repo)["pinix-one"]["version"]) == (team.url, "1.0")
    assert not ran.exists()


def test_taking_a_pinned_extension_from_another_index_is_refused_without_move(tmp_path, indexes):
    team, attacker = indexes
    repo = _team_repo(tmp_path, team, attacker, "pinix-two")
    ran = _evil(tmp_path, attacker, "pinix-two", "9.0", "pinix-two/t")
    before = _pin(repo)

    r = cli(repo, "extension", "pull", "pinix-two", "--index", attacker.url)
    assert r.code == 1
    assert r.error["code"] == "pinned_index" and team.url in r.error["error"], r
    assert "--move" in r.error["hint"]
    assert _pin(repo) == before and not ran.exists()

    r = cli(repo, "extension", "pull", "pinix-two", "--move")  # --move says where to
    assert r.code == 2 and r.error["code"] == "usage", r


def test_a_move_asked_for_is_made_and_recorded(tmp_path, indexes):
    team, other = indexes
    repo = _team_repo(tmp_path, team, other, "pinix-three")
    make_wheel(other.packages, "pinix-three", "2.0", types=("pinix-three/t",))
    r = cli(repo, "extension", "pull", "pinix-three", "--index", other.url, "--move")
    assert r.code == 0, r
    assert (_pin(repo)["pinix-three"]["index"], _pin(repo)["pinix-three"]["version"]) == (other.url, "2.0")
    moves = [c for c in cli(repo, "extension", "history", "pinix-three").data["changes"] if c["action"] == "move"]
    assert len(moves) == 1
    assert (moves[0]["from"]["index"], moves[0]["to"]["index"]) == (team.url, other.url)


def test_a_new_name_that_two_trusted_indexes_have_is_not_guessed(tmp_path, indexes):
    team, attacker = indexes
    make_wheel(team.packages, "pinix-four", "1.0", types=("pinix-four/t",))
    ran = _evil(tmp_path, attacker, "pinix-four", "1.1", "pinix-four/t")
    repo = init_repo(tmp_path / "repo")
    for ix in (team, attacker):
        assert cli(repo, "extension", "trust", "add", ix.url).code == 0

    for spec in ("pinix-four", "pinix-four==1.0"):
        r = cli(repo, "extension", "pull", spec)
        assert r.code == 1 and r.error["code"] == "ambiguous_index", r
        assert team.url in r.error["error"] and attacker.url in r.error["error"]
        assert "--index" in r.error["hint"]
    assert not (repo / "extensions" / "lockfile.json").read_text().count("pinix-four")
    assert not ran.exists()

    r = cli(repo, "extension", "pull", "pinix-four", "--index", team.url)
    assert r.code == 0 and r.data["index"] == team.url, r


def test_an_extension_checked_at_pull_time_sees_none_of_this_process_secrets(tmp_path, pypi):
    """pull loads the types in a clean process: its import-time code runs there
    before anyone used it, so that process gets no token, key or webhook secret."""
    seen = tmp_path / "environment-seen"
    body = (f"import json, os\nopen({str(seen)!r}, 'w').write(json.dumps(dict(os.environ)))\n"
            + TYPE_MODULE.format(type="pinix-env/t", name="pinix-env", version="1.0"))
    make_wheel(pypi.packages, "pinix-env", "1.0", types=("pinix-env/t",), body=body)
    repo = init_repo(tmp_path / "repo")
    secret = "whsec-probe-0123456789"
    r = cli(repo, "extension", "pull", "pinix-env", "--index", pypi.url,
            env={"SWAMP_WEBHOOK_GH_SECRET": secret, "AWS_SECRET_ACCESS_KEY": secret})
    assert r.code == 0, r
    env = json.loads(seen.read_text())
    assert secret not in json.dumps(env)
    assert "PATH" in env
