"""The lockfile schema and the isolated, hash-checked install (no server:
a file:// index, wheels made by hand)."""

from __future__ import annotations

import sys

import pytest

from swamp.errors import HashMismatchError
from swamp.extensions import install, lockfile
from swamp.extensions.index import Index, sha256_of
from swamp.extensions.lockfile import Entry, Lockfile, Wheel
from swamp.repo.context import Repo
from tests.extensions.wheels import make_wheel


@pytest.fixture
def repo(tmp_path):
    from swamp.repo.init import init_repo

    init_repo(tmp_path / "repo")
    return Repo.open(tmp_path / "repo")


def _entry(wheel, index) -> Entry:
    return Entry(version="1.0", index=Index(str(index)).url,
                 wheels=[Wheel(project="ext-one", version="1.0", filename=wheel.name, sha256=sha256_of(wheel))],
                 types=["acme/one"])


def test_lockfile_round_trips_and_lives_in_the_repository_without_a_shared_datastore(repo, tmp_path):
    wheel = make_wheel(tmp_path, "ext-one", "1.0", types=("acme/one",))
    lock = Lockfile(extensions={"ext-one": _entry(wheel, tmp_path)}, trustedIndexes={"https://x/simple/": True})
    lockfile.write(repo, lock)
    assert (repo.root / "extensions" / "lockfile.json").is_file()  # beside extensions/models, for git
    assert lockfile.read(repo) == lock
    assert lockfile.read(repo).provider_of("acme/one") == ["ext-one"]


def test_a_lockfile_with_an_unknown_key_names_it(repo):
    from swamp.errors import ValidationError

    (repo.root / "extensions" / "lockfile.json").write_text('{"extensions": {"a": {"version": "1"}}, "x": 1}')
    with pytest.raises(ValidationError) as e:
        lockfile.read(repo)
    assert "extensions/lockfile.json" in e.value.message and "x: unknown key" in e.value.message


def test_install_unpacks_into_its_own_directory_and_not_on_sys_path(repo, tmp_path):
    wheel = make_wheel(tmp_path, "ext-one", "1.0", types=("acme/one",))
    entry = _entry(wheel, tmp_path)
    target = install.ensure(repo, "ext-one", entry)
    assert target == repo.local_dir / "cache" / "extensions" / "ext-one-1.0"
    assert (target / "ext_one" / "t0.py").is_file()
    assert install.is_installed(repo, "ext-one", entry)
    assert str(target) not in sys.path  # only when a type from it is needed


def test_a_tampered_wheel_is_refused_and_nothing_is_installed(repo, tmp_path):
    wheel = make_wheel(tmp_path, "ext-one", "1.0", types=("acme/one",))
    entry = _entry(wheel, tmp_path)
    make_wheel(tmp_path, "ext-one", "1.0", types=("acme/evil",))  # same file name, other bytes
    with pytest.raises(HashMismatchError) as e:
        install.ensure(repo, "ext-one", entry)
    assert wheel.name in e.value.message and "lockfile pins" in e.value.message
    assert not install.target(repo, "ext-one", entry).exists()


def test_a_wheel_escaping_its_directory_is_refused(repo, tmp_path):
    import zipfile

    from swamp.errors import ExtensionError

    bad = tmp_path / "bad-1.0-py3-none-any.whl"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../escape.py", "x = 1")
    with pytest.raises(ExtensionError):
        install.unpack(bad, tmp_path / "out")
    assert not (tmp_path / "escape.py").exists()


def test_pins_follow_a_repository_between_the_datastore_and_git(repo, tmp_path):
    """Moved back from a shared datastore, the pins it held there still count."""
    lock = Lockfile(trustedIndexes={"https://x/simple/": True})
    repo.datastore.write_bytes(lockfile.PATH, lockfile.dumps(lock))
    assert lockfile.read(repo) == lock
    lockfile.write(repo, Lockfile())  # the next change writes the repository's file
    assert (repo.root / lockfile.PATH).is_file() and lockfile.read(repo) == Lockfile()
