"""`swamp extension ...` through the command line, against a real
pypiserver on 127.0.0.1 (wheels made by hand and dropped into its
directory: the publishing tests build real ones)."""

from __future__ import annotations

import json

import pytest

from tests.extensions.wheels import make_wheel
from tests.helpers import cli, init_repo


@pytest.fixture
def repo(tmp_path):
    return init_repo(tmp_path / "repo")


def _lock(repo):
    return json.loads((repo / "extensions" / "lockfile.json").read_text())


def test_pull_list_run_outdated_update_rm(repo, pypi):
    make_wheel(pypi.packages, "cli-alpha", "1.0", types=("cli/alpha",))
    r = cli(repo, "extension", "pull", "cli-alpha", "--index", pypi.url)
    assert r.code == 0, r
    assert r.data["version"] == "1.0" and r.data["types"] == ["cli/alpha"] and r.data["changed"] is True
    entry = _lock(repo)["extensions"]["cli-alpha"]
    assert entry["version"] == "1.0" and entry["index"] == pypi.url
    assert [w["filename"] for w in entry["wheels"]] == ["cli_alpha-1.0-py3-none-any.whl"]

    listed = cli(repo, "extension", "list").data["extensions"]
    assert [(e["name"], e["version"], e["installed"]) for e in listed] == [("cli-alpha", "1.0", True)]

    # its type runs like any other
    assert cli(repo, "model", "create", "cli/alpha", "greeter").code == 0
    run = cli(repo, "model", "method", "run", "greeter", "hello")
    assert run.code == 0, run

    assert cli(repo, "extension", "outdated").code == 0
    make_wheel(pypi.packages, "cli-alpha", "1.1", types=("cli/alpha",))
    out = cli(repo, "extension", "outdated")
    assert out.code == 1 and out.data["extensions"][0]["latest"] == "1.1"
    check = cli(repo, "extension", "update", "--check")
    assert check.code == 0 and check.data["updates"] == [{"name": "cli-alpha", "from": "1.0", "to": "1.1"}]
    assert _lock(repo)["extensions"]["cli-alpha"]["version"] == "1.0"
    up = cli(repo, "extension", "update", "cli-alpha")
    assert up.code == 0, up
    assert _lock(repo)["extensions"]["cli-alpha"]["version"] == "1.1"
    assert cli(repo, "extension", "outdated").code == 0

    rm = cli(repo, "extension", "rm", "cli-alpha")
    assert rm.code == 0 and rm.data["version"] == "1.1" and rm.data["usedBy"] == ["greeter (cli/alpha)"]
    assert _lock(repo)["extensions"] == {}
    assert not list((repo / ".swamp" / "cache" / "extensions").glob("cli-alpha-*"))
    again = cli(repo, "extension", "rm", "cli-alpha")
    assert again.code == 1 and again.error["code"] == "not_found"


def test_install_restores_the_pins_of_a_fresh_checkout_and_refuses_a_tampered_wheel(repo, pypi, tmp_path):
    make_wheel(pypi.packages, "cli-beta", "2.0", types=("cli/beta",))
    assert cli(repo, "extension", "pull", "cli-beta==2.0", "--index", pypi.url).code == 0

    clone = init_repo(tmp_path / "clone")  # a teammate's checkout: the lockfile came through git
    (clone / "extensions" / "lockfile.json").write_text((repo / "extensions" / "lockfile.json").read_text())
    r = cli(clone, "extension", "install")
    assert r.code == 0 and r.data["installed"] == ["cli-beta"], r
    assert cli(clone, "extension", "install").data["alreadyInstalled"] == ["cli-beta"]

    other = init_repo(tmp_path / "other")
    (other / "extensions" / "lockfile.json").write_text((repo / "extensions" / "lockfile.json").read_text())
    make_wheel(pypi.packages, "cli-beta", "2.0", types=("cli/evil",))  # same file name, other bytes
    bad = cli(other, "extension", "install")
    assert bad.code == 1 and bad.error["code"] == "hash_mismatch", bad
    assert "cli_beta-2.0-py3-none-any.whl" in bad.error["error"] and "lockfile pins" in bad.error["error"]
    assert not list((other / ".swamp" / "cache" / "extensions").glob("cli-beta-*"))


def test_a_pinned_extension_missing_here_installs_on_first_use(repo, pypi, tmp_path):
    make_wheel(pypi.packages, "cli-gamma", "1.0", types=("cli/gamma",))
    assert cli(repo, "extension", "pull", "cli-gamma", "--index", pypi.url).code == 0
    assert cli(repo, "model", "create", "cli/gamma", "g").code == 0

    clone = init_repo(tmp_path / "clone")
    for rel in ("extensions/lockfile.json", "models"):
        src, dst = repo / rel, clone / rel
        if src.is_dir():
            import shutil

            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.write_text(src.read_text())
    run = cli(clone, "model", "method", "run", "g", "hello")
    assert run.code == 0, run
    assert (clone / ".swamp" / "cache" / "extensions" / "cli-gamma-1.0").is_dir()


def test_an_unpinned_type_names_extension_search(repo):
    r = cli(repo, "model", "create", "nobody/pinned", "x")
    assert r.code == 1 and "swamp extension search nobody" in r.error["hint"]


def test_search_info_and_trust(repo, pypi):
    make_wheel(pypi.packages, "cli-delta", "0.1", types=("cli/delta",))
    none = cli(repo, "extension", "search", "cli-delta")
    assert none.code == 2 and "trust add" in none.error["hint"]
    assert cli(repo, "extension", "trust", "add", pypi.url).code == 0
    assert cli(repo, "extension", "trust", "list").data["trusted"] == [pypi.url]
    # part of the name (the index is shared by this session's tests: a query only cli-delta matches)
    found = cli(repo, "extension", "search", "li-delt").data["results"]
    assert [(x["name"], x["latest"], x["pinned"]) for x in found] == [("cli-delta", "0.1", None)]
    assert cli(repo, "extension", "pull", "cli-delta").code == 0  # from the trusted index
    info = cli(repo, "extension", "info", "cli-delta").data
    assert info["versions"] == ["0.1"] and info["pinned"]["types"] == ["cli/delta"] and info["installed"]
    assert cli(repo, "extension", "trust", "rm", pypi.url).code == 0
    assert cli(repo, "extension", "trust", "list").data["trusted"] == []
