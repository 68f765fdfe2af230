"""Installed extension code is not writable by others, whatever the umask,
and an install changed after it was made is refused before anything of it
is imported (issue 23: local file modes). A wheel changed on the index is
refused too, and neither refusal's hint says to pin again."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.extensions.wheels import make_wheel
from tests.helpers import cli, init_repo


@pytest.fixture
def umask_000():
    old = os.umask(0)  # what a CI runner or a container entrypoint may have; the CLI inherits it
    try:
        yield
    finally:
        os.umask(old)


def _installed(repo: Path, name: str) -> Path:
    return repo / ".swamp" / "cache" / "extensions" / f"{name}-1.0"


def _pinned_and_used(tmp_path, pypi, name: str) -> Path:
    make_wheel(pypi.packages, name, "1.0", types=(f"{name}/t",))
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "extension", "pull", name, "--index", pypi.url).code == 0
    assert cli(repo, "model", "create", f"{name}/t", "m").code == 0
    assert cli(repo, "model", "method", "run", "m", "hello").code == 0
    return repo


def _writable_by_others(root: Path) -> list[str]:
    found = []
    for path in [root, *root.rglob("*")]:
        if path.lstat().st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            found.append(f"{oct(path.lstat().st_mode & 0o777)} {path}")
    return found


def _refused(r, code: str = "type_load_error") -> dict:
    assert r.code == 1, r
    err = r.error
    assert err["code"] == code, err
    hint = err.get("hint", "")
    assert "extension update" not in hint and "extension pull" not in hint, hint  # never "pin it again"
    return err


def test_under_umask_000_installed_code_is_not_writable_by_others(tmp_path, pypi, umask_000):
    repo = _pinned_and_used(tmp_path, pypi, "integ-modes")
    root = repo / ".swamp" / "cache" / "extensions"
    assert _writable_by_others(root) == []
    assert not root.parent.stat().st_mode & stat.S_IWOTH
    # bytecode is ours too: Python wrote no __pycache__ of its own under this umask
    assert list(_installed(repo, "integ-modes").rglob("*.pyc"))


def test_a_changed_install_is_refused_before_its_code_runs(tmp_path, pypi):
    repo = _pinned_and_used(tmp_path, pypi, "integ-edit")
    ran = tmp_path / "tampered-code-ran"
    module = _installed(repo, "integ-edit") / "integ_edit" / "t0.py"
    module.write_text(module.read_text() + f"\nopen({str(ran)!r}, 'w').write('ran')\n")

    err = _refused(cli(repo, "model", "method", "run", "m", "hello"))
    assert "integ_edit/t0.py was changed" in err["error"] and "--reinstall" in err["hint"]
    _refused(cli(repo, "extension", "install"), "tampered_install")
    assert not ran.exists()

    assert cli(repo, "extension", "install", "--reinstall").code == 0
    assert cli(repo, "model", "method", "run", "m", "hello").code == 0
    assert not ran.exists()


@pytest.mark.parametrize("change", ["planted bytecode", "added module", "writable by others", "removed file"])
def test_other_changes_to_an_install_are_refused_too(tmp_path, pypi, change):
    name = "integ-" + change.split()[0]
    repo = _pinned_and_used(tmp_path, pypi, name)
    pkg = _installed(repo, name) / name.replace("-", "_")
    if change == "planted bytecode":
        tag = next((pkg / "__pycache__").glob("t0.*.pyc")).name.split(".")[1]
        (pkg / "__pycache__" / f"evil.{tag}.pyc").write_bytes(b"\0" * 16)
    elif change == "added module":
        (pkg / "extra.py").write_text("x = 1\n")
    elif change == "writable by others":
        os.chmod(pkg / "t0.py", 0o666)
    else:
        (pkg / "__init__.py").unlink()
    _refused(cli(repo, "model", "method", "run", "m", "hello"))


def test_a_wheel_changed_on_the_index_is_refused_at_first_use_with_a_safe_hint(tmp_path, pypi):
    repo = _pinned_and_used(tmp_path, pypi, "integ-swap")
    wheel = pypi.packages / "integ_swap-1.0-py3-none-any.whl"
    make_wheel(tmp_path, "integ-swap", "1.0", types=("integ-swap/t", "integ-swap/u"))  # other bytes, same name
    os.replace(tmp_path / wheel.name, wheel)
    import shutil

    shutil.rmtree(repo / ".swamp" / "cache" / "extensions")  # a new teammate's machine: first use installs

    err = _refused(cli(repo, "model", "method", "run", "m", "hello"))
    assert "lockfile pins" in err["error"] and "do not pin it again" in err["hint"]
    err = _refused(cli(repo, "extension", "install"), "hash_mismatch")
    assert "do not pin it again" in err["hint"]


def test_the_list_of_local_checkouts_is_not_writable_by_others_and_refused_if_it_is(tmp_path, umask_000):
    """``extension source add`` lists checkouts whose code is loaded: a list
    someone else could edit would load their code."""
    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "extension", "new", "integ-src", "--path", tmp_path / "integ-src").code == 0
    assert cli(repo, "extension", "source", "add", tmp_path / "integ-src").code == 0
    listed = repo / ".swamp" / "cache" / "extensions" / "sources.json"
    assert listed.stat().st_mode & 0o777 == 0o644
    assert cli(repo, "model", "create", "integ-src/hello", "m").code == 0

    os.chmod(listed, 0o666)
    r = cli(repo, "model", "method", "run", "m", "greet")
    assert r.code == 1 and r.error["code"] == "tampered_install" and "writable by others" in r.error["error"], r
