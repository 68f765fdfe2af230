"""Several `extension pull` at once in one checkout lose nothing; a broken
extension breaks only the commands that need its types; dependencies come
with the extension."""

from __future__ import annotations

import json

import pytest

from tests.extensions.wheels import TYPE_MODULE, make_wheel
from tests.helpers import cli, init_repo, popen


@pytest.mark.slow
def test_eight_concurrent_pulls_in_one_checkout_are_all_pinned(tmp_path, pypi):
    repo = init_repo(tmp_path / "repo")
    names = [f"conc-{i}" for i in range(8)]
    for n in names:
        make_wheel(pypi.packages, n, "1.0", types=(f"conc/t{n[-1]}",))
    # they take turns on the lockfile's lock: patient, on a loaded 2-core machine
    procs = [popen(repo, "extension", "pull", n, "--index", pypi.url, env={"SWAMP_LOCK_TIMEOUT_MS": "90000"})
             for n in names]
    outs = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _, _ in outs), outs
    lock = json.loads((repo / "extensions" / "lockfile.json").read_text())
    assert sorted(lock["extensions"]) == names
    assert sorted(e["name"] for e in cli(repo, "extension", "list").data["extensions"]) == names


def test_a_broken_extension_breaks_only_its_own_types(tmp_path, pypi):
    repo = init_repo(tmp_path / "repo")
    make_wheel(pypi.packages, "brk-good", "1.0", types=("brk/good",))
    # What a peer on another Python sees, say: the module no longer imports there
    # (here: when BRK_BAD_BREAKS is set; an installed file edited instead is refused as tampered).
    breaks = "import os\nif os.environ.get('BRK_BAD_BREAKS'):\n    import no_such_module_here\n"
    make_wheel(pypi.packages, "brk-bad", "1.0", types=("brk/bad",),
               body=breaks + TYPE_MODULE.format(type="brk/bad", name="brk-bad", version="1.0"))
    for n in ("brk-good", "brk-bad"):
        assert cli(repo, "extension", "pull", n, "--index", pypi.url).code == 0
    assert cli(repo, "model", "create", "brk/good", "good").code == 0
    assert cli(repo, "model", "create", "brk/bad", "bad").code == 0
    module = repo / ".swamp" / "cache" / "extensions" / "brk-bad-1.0" / "brk_bad" / "t0.py"

    assert cli(repo, "model", "method", "run", "good", "hello", env={"BRK_BAD_BREAKS": "1"}).code == 0
    bad = cli(repo, "model", "method", "run", "bad", "hello", env={"BRK_BAD_BREAKS": "1"})
    assert bad.code == 1
    assert f"{module}:3" in bad.error["error"] and "no_such_module_here" in bad.error["error"], bad
    assert "Traceback" not in bad.stderr


def test_pull_refuses_an_extension_whose_types_do_not_load(tmp_path, pypi):
    repo = init_repo(tmp_path / "repo")
    make_wheel(pypi.packages, "brk-import", "1.0", types=("brk/import",), body="x = 1\nraise ValueError('nope')\n")
    r = cli(repo, "extension", "pull", "brk-import", "--index", pypi.url)
    assert r.code == 1 and "t0.py:2" in r.error["error"] and "nope" in r.error["error"], r
    assert not (repo / "extensions" / "lockfile.json").exists()


def test_dependencies_are_pinned_and_installed_with_the_extension(tmp_path, pypi):
    repo = init_repo(tmp_path / "repo")
    make_wheel(pypi.packages, "dep-helper", "3.0")
    make_wheel(pypi.packages, "dep-user", "1.0", types=("dep/user",), requires=("dep-helper>=2",))
    r = cli(repo, "extension", "pull", "dep-user", "--index", pypi.url)
    assert r.code == 0, r
    wheels = json.loads((repo / "extensions" / "lockfile.json").read_text())["extensions"]["dep-user"]["wheels"]
    assert [(w["project"], w["version"]) for w in wheels] == [("dep-helper", "3.0"), ("dep-user", "1.0")]
    assert (repo / ".swamp" / "cache" / "extensions" / "dep-user-1.0" / "dep_helper").is_dir()
