"""How a change to the lockfile meets a concurrent one: another change to
the same entry made while this command staged is a named conflict, never
overwritten; a new version replaces the old install; a wheel for another
platform is refused before anything is unpacked."""

from __future__ import annotations

import json

import pytest

from swamp.app import extensions as ext
from swamp.errors import ConflictError
from swamp.repo.context import Repo
from tests.extensions.wheels import make_wheel
from tests.helpers import init_repo


@pytest.fixture
def repo(tmp_path):
    return Repo.open(init_repo(tmp_path / "repo"))


def test_the_same_entry_changed_meanwhile_is_a_named_conflict(repo, pypi, monkeypatch):
    for v in ("1.0", "1.1"):
        make_wheel(pypi.packages, "chg-race", v, types=("chg/race",))
    real = ext._stage

    def racing(repo_, name, version, indexes):
        entry = real(repo_, name, version, indexes)
        if version == "1.0":  # while we staged 1.0, someone pinned 1.1
            monkeypatch.setattr(ext, "_stage", real)
            ext.pull(repo_, "chg-race==1.1", index=pypi.url)
        return entry

    monkeypatch.setattr(ext, "_stage", racing)
    with pytest.raises(ConflictError) as e:
        ext.pull(repo, "chg-race==1.0", index=pypi.url)
    assert "chg-race" in e.value.message and "1.1" in e.value.message
    pins = json.loads((repo.root / "extensions" / "lockfile.json").read_text())["extensions"]
    assert pins["chg-race"]["version"] == "1.1"  # theirs kept


def test_a_new_version_replaces_the_old_install(repo, pypi):
    for v in ("1.0", "2.0"):
        make_wheel(pypi.packages, "chg-up", v, types=("chg/up",))
    ext.pull(repo, "chg-up==1.0", index=pypi.url)
    ext.pull(repo, "chg-up==2.0", index=pypi.url)
    installed = sorted(p.name for p in (repo.local_dir / "cache" / "extensions").iterdir()
                       if p.name.startswith("chg-up"))
    assert installed == ["chg-up-2.0"]


def test_a_wheel_for_another_platform_is_refused(repo, tmp_path):
    from swamp.extensions import install
    from swamp.errors import ExtensionError
    from swamp.extensions.index import sha256_of
    from swamp.extensions.lockfile import Entry, Wheel

    wheel = make_wheel(tmp_path, "chg-win", "1.0", types=("chg/win",))
    foreign = wheel.rename(tmp_path / "chg_win-1.0-cp311-cp311-win_amd64.whl")
    entry = Entry(version="1.0", index=tmp_path.as_uri() + "/", types=["chg/win"],
                  wheels=[Wheel(project="chg-win", version="1.0", filename=foreign.name, sha256=sha256_of(foreign))])
    with pytest.raises(ExtensionError) as e:
        install.install_files(repo, "chg-win", entry, {foreign.name: foreign})
    assert "another platform" in e.value.message
    assert not install.target(repo, "chg-win", entry).exists()
