"""Review of the stand-ins for standard modules on the start-up path:
util/clock.isoformat (for datetime), util/ids (for uuid and socket),
util/atomic.mkstemp (for tempfile.mkstemp) and util/digest.sha256_hex (for
hashlib): the same results as the functions they replace, on the edges too,
and for mkstemp the same security properties."""

from __future__ import annotations

import datetime
import hashlib
import os
import socket
import stat
import threading
import uuid

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from swamp.util import atomic, clock, digest, ids


def stdlib_isoformat(ts) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).isoformat(timespec="milliseconds") \
        .replace("+00:00", "Z")


def outcome(fn, *args):
    try:
        return fn(*args)
    except (ValueError, OverflowError, OSError) as e:
        return type(e).__name__ if not isinstance(e, OverflowError) else "OverflowError"


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.floats(-62135596800, 253402300799.999, allow_nan=False),
                 st.integers(-62135596800, 253402300799),
                 st.floats(-5, 5), st.floats(1.7e9, 1.8e9)))
@example(0.9995)
@example(-0.0005)
@example(1764551234.0005)
@example(1764551234.9999995)
@example(-1e-7)
@example(5e-324)
def test_isoformat_is_datetimes_in_its_range(ts):
    assert clock.isoformat(ts) == stdlib_isoformat(ts)


@pytest.mark.parametrize("ts", [253402300800, -62135596801, float(2**53)])
def test_isoformat_outside_datetimes_range_fails_as_datetime_does(ts):
    assert outcome(clock.isoformat, ts) == outcome(stdlib_isoformat, ts)


@pytest.mark.parametrize("ts", [float("nan"), float("inf"), float("-inf"), 1e20])
def test_isoformat_of_what_is_no_time_raises(ts):
    with pytest.raises((ValueError, OverflowError, OSError)):
        clock.isoformat(ts)
    with pytest.raises((ValueError, OverflowError, OSError)):
        stdlib_isoformat(ts)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=16, max_size=16))
@example(b"\x00" * 16)
@example(b"\xff" * 16)
def test_ids_are_uuid4s_of_the_same_bytes(raw):
    want = uuid.UUID(bytes=raw, version=4)
    assert ids.new_id(raw) == str(want)
    assert ids.uuid4_hex(raw) == want.hex
    assert uuid.UUID(ids.new_id(raw)).version == 4 and uuid.UUID(ids.new_id(raw)).variant == uuid.RFC_4122


def test_ids_are_random_and_hostname_is_sockets():
    made = {ids.new_id() for _ in range(2000)}
    assert len(made) == 2000
    assert ids.hostname() == socket.gethostname()


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.sampled_from([b"", b"a" * digest.SMALL, b"b" * (digest.SMALL + 1)])))
def test_sha256_hex_is_hashlibs(data):
    assert digest.sha256_hex(data) == hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------ mkstemp
def test_mkstemp_makes_a_private_exclusive_file_as_tempfile_does(tmp_path):
    old = os.umask(0)
    try:
        fd, name = atomic.mkstemp(tmp_path, ".tmp-x.")
    finally:
        os.umask(old)
    try:
        assert os.path.isabs(name) and os.path.dirname(name) == str(tmp_path)
        assert os.path.basename(name).startswith(".tmp-x.")
        st_ = os.fstat(fd)
        assert stat.S_IMODE(st_.st_mode) == 0o600  # not 0666 even with umask 0
        assert os.stat(name).st_ino == st_.st_ino and stat.S_ISREG(st_.st_mode)
        assert not os.get_inheritable(fd)  # O_CLOEXEC, as tempfile
        os.write(fd, b"x")
        os.lseek(fd, 0, 0)
        assert os.read(fd, 1) == b"x"  # O_RDWR
    finally:
        os.close(fd)


def test_mkstemp_with_a_relative_directory_returns_an_absolute_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("sub")
    fd, name = atomic.mkstemp("sub", "p")
    os.close(fd)
    assert name == os.path.join(str(tmp_path), "sub", os.path.basename(name))


def test_mkstemp_never_follows_or_reuses_a_name_already_there(tmp_path, monkeypatch):
    """A name taken (by a file, or by a symlink pointing anywhere) is never
    opened: O_EXCL|O_NOFOLLOW, and another name is drawn."""
    target = tmp_path / "victim"
    target.write_bytes(b"keep")
    draws = iter([b"\x01" * 6, b"\x01" * 6, b"\x02" * 6, b"\x03" * 6])
    monkeypatch.setattr(atomic.os, "urandom", lambda n: next(draws))
    (tmp_path / ("p" + "01" * 6)).symlink_to(target)
    (tmp_path / ("p" + "02" * 6)).write_bytes(b"other")
    fd, name = atomic.mkstemp(tmp_path, "p")
    os.close(fd)
    assert name.endswith("03" * 6)
    assert target.read_bytes() == b"keep" and (tmp_path / ("p" + "02" * 6)).read_bytes() == b"other"


def test_mkstemp_errors_are_tempfiles(tmp_path):
    import tempfile

    f = tmp_path / "file"
    f.write_text("")
    for where in (tmp_path / "missing", f):
        with pytest.raises(OSError) as ours:
            atomic.mkstemp(where, "p")
        with pytest.raises(OSError) as theirs:
            tempfile.mkstemp(dir=where, prefix="p")
        assert type(ours.value) is type(theirs.value)


def test_mkstemp_names_never_collide_under_concurrency(tmp_path):
    names: list[str] = []
    lock = threading.Lock()

    def make():
        got = []
        for _ in range(250):
            fd, name = atomic.mkstemp(tmp_path, "c")
            os.close(fd)
            got.append(name)
        with lock:
            names.extend(got)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(names) == len(set(names)) == 2000 == len(os.listdir(tmp_path))


def test_sha256_hex_takes_every_buffer_hashlib_takes_and_refuses_the_rest_alike():
    import array
    import mmap

    m = mmap.mmap(-1, 10)
    m.write(b"0123456789")
    for data in (bytearray(b"ab"), memoryview(b"abcdef"), memoryview(b"abcdef")[::2], m,
                 array.array("I", range(300_000)), memoryview(array.array("I", [1, 2, 3])), "text", None):
        got, want = outcome_any(digest.sha256_hex, data), outcome_any(lambda d: hashlib.sha256(d).hexdigest(), data)
        assert got == want, type(data)


def outcome_any(fn, *args):
    try:
        return fn(*args)
    except Exception as e:
        return type(e).__name__
