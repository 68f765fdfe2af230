"""util/atomic makes its temp files as tempfile.mkstemp would, and
util/digest hashes as hashlib does, without importing tempfile or hashlib
on a small write."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swamp.util import digest
from swamp.util.atomic import atomic_write, mkstemp, temp_prefix

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


@given(st.binary(max_size=4096))
def test_the_digest_is_hashlibs(data):
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_large_input_is_hashlibs_too():
    data = os.urandom(digest.SMALL + 17)
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_temp_file_is_private_exclusive_and_named_by_its_writer(tmp_path):
    fd, name = mkstemp(tmp_path, temp_prefix())
    try:
        assert os.path.isabs(name) and os.path.dirname(name) == str(tmp_path)
        assert os.path.basename(name).startswith(temp_prefix())
        assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o600
        assert not os.get_inheritable(fd)
    finally:
        os.close(fd)
    names = {mkstemp(tmp_path, "x")[1] for _ in range(50)}
    assert len(names) == 50


def test_a_missing_directory_is_reported_as_tempfile_reports_it(tmp_path):
    with pytest.raises(FileNotFoundError):
        mkstemp(tmp_path / "gone", "x")


def test_a_symlink_in_the_way_is_never_followed(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    (tmp_path / "xaaaaaaaaaaaa").symlink_to(target)
    calls = iter([bytes.fromhex("aaaaaaaaaaaa"), bytes.fromhex("bbbbbbbbbbbb")])
    monkeypatch.setattr(os, "urandom", lambda n: next(calls))
    fd, name = mkstemp(tmp_path, "x")
    os.close(fd)
    assert name.endswith("xbbbbbbbbbbbb") and not target.exists()


def test_a_small_atomic_write_imports_neither_tempfile_nor_hashlib(tmp_path):
    code = ("import sys\nfrom swamp.util.atomic import atomic_write\n"
            f"atomic_write({str(tmp_path / 'a' / 'f')!r}, b'x')\n"
            "print(sorted(m for m in ('tempfile', 'hashlib', 'socket') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.path.abspath(SRC)},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert (tmp_path / "a" / "f").read_bytes() == b"x"
    atomic_write(tmp_path / "a" / "f", "y")
    assert os.listdir(tmp_path / "a") == ["f"]


def test_a_write_that_need_not_survive_a_crash_is_still_whole(tmp_path):
    target = tmp_path / "running" / "m.json"
    atomic_write(target, b'{"pid": 1}', durable=False)
    atomic_write(target, b'{"pid": 2}', durable=False)
    assert target.read_bytes() == b'{"pid": 2}' and os.listdir(target.parent) == ["m.json"]
