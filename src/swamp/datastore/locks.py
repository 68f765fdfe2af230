"""Lock files for the filesystem datastore: TTL, heartbeat, nonce fencing and
stale takeover, correct across processes on one machine or a shared disk.

A lock is a file created with O_EXCL holding ``{holder, host, pid, nonce,
ttlMs, acquiredAt}``. Its mtime is the heartbeat: the holder touches it every
ttl/3 after checking that the nonce is still its own. A lock whose mtime is
older than its TTL, or whose holder process on this host has exited, is
stale; takers serialize through a short-lived ``.takeover`` file so that of
several takers exactly one wins.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

from swamp.errors import LeaseLostError, LockTimeoutError
from swamp.util import clock
from swamp.util.ids import holder as default_holder
from swamp.util.ids import hostname

DEFAULT_TTL_MS = 30_000


def lock_timeout_ms() -> int:
    return int(os.environ.get("SWAMP_LOCK_TIMEOUT_MS", "60000"))


def lock_file_name(name: str) -> str:
    return urllib.parse.quote(name, safe="") + ".lock"


def lock_name_from_file(file_name: str) -> str:
    return urllib.parse.unquote(file_name[: -len(".lock")])


def read_lock_info(path: Path) -> dict | None:
    try:
        st = path.stat()
        info = json.loads(path.read_text() or "{}")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (ValueError, OSError):
        # Being written right now, or torn by a crash: it is held by someone
        # unknown until its mtime says it is stale.
        info = {}
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
    info["_mtime"] = st.st_mtime
    return info


def _is_stale(info: dict) -> bool:
    ttl = info.get("ttlMs", DEFAULT_TTL_MS) / 1000.0
    return info["_mtime"] + ttl < time.time() or holder_exited(info)


def holder_exited(info: dict) -> bool:
    """A holder on this host whose process is gone (killed with SIGKILL, say)
    will never release nor heartbeat: no need to wait out its TTL. A holder
    elsewhere, or one we cannot check, counts as alive."""
    pid = info.get("pid")
    if info.get("host") != hostname() or not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


class FileLock:
    def __init__(self, lock_dir: Path, name: str, *, ttl_ms: int = DEFAULT_TTL_MS,
                 timeout_ms: int | None = None):
        self.name = name
        self.path = Path(lock_dir) / lock_file_name(name)
        self.ttl_ms = ttl_ms
        self.timeout_ms = lock_timeout_ms() if timeout_ms is None else timeout_ms
        self.nonce: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False

    # ------------------------------------------------------------- acquire
    def acquire(self) -> "FileLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.timeout_ms / 1000.0
        delay = 0.005
        while True:
            if self._try_create():
                self._start_heartbeat()
                return self
            info = read_lock_info(self.path)
            if info is not None and _is_stale(info):
                self._take_over(info)
                continue
            if time.monotonic() >= deadline:
                raise self._timeout_error(info)
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())) * random.uniform(0.5, 1.5))
            delay = min(delay * 2, 0.25)

    def _try_create(self) -> bool:
        nonce = uuid.uuid4().hex
        body = json.dumps({
            "name": self.name, "holder": default_holder(), "host": hostname(), "pid": os.getpid(),
            "nonce": nonce, "ttlMs": self.ttl_ms, "acquiredAt": clock.isoformat(),
        }).encode()
        # The lock appears with its body already in it (written aside, then
        # hard-linked into place, which fails if it exists): a holder killed
        # at any instant never leaves an anonymous, empty lock that no one
        # can tell is dead.
        tmp = self.path.with_name(f".{self.path.name}.{nonce}.tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        try:
            os.write(fd, body)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        except OSError:
            # A filesystem without hard links: create-exclusive, then write.
            if not self._create_in_place(body):
                return False
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self.nonce = nonce
        return True

    def _create_in_place(self, body: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, body)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def _take_over(self, stale: dict) -> None:
        guard = self.path.with_name(self.path.name + ".takeover")
        try:
            fd = os.open(guard, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            # Another taker is at work; a guard left by a killed taker expires.
            with contextlib.suppress(FileNotFoundError):
                if guard.stat().st_mtime + 10 < time.time():
                    guard.unlink()
            time.sleep(0.01)
            return
        os.close(fd)
        try:
            current = read_lock_info(self.path)
            # Fencing: remove only the very lock we judged stale.
            if current is not None and _is_stale(current) and current.get("nonce") == stale.get("nonce"):
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
        finally:
            with contextlib.suppress(FileNotFoundError):
                guard.unlink()

    def _timeout_error(self, info: dict | None) -> LockTimeoutError:
        if info and info.get("holder"):
            who = f"{info.get('holder')} (pid {info.get('pid')}, since {info.get('acquiredAt')})"
        else:
            who = "another process"
        return LockTimeoutError(
            f"timed out after {self.timeout_ms} ms waiting for lock {self.name!r}, held by {who}",
            hint="wait for it to finish, raise SWAMP_LOCK_TIMEOUT_MS, or break a dead holder's "
                 f"lock with 'swamp datastore lock release {self.name} --force'",
        )

    # ----------------------------------------------------------- heartbeat
    def _start_heartbeat(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name=f"lock-heartbeat {self.name}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        interval = self.ttl_ms / 3000.0
        while not self._stop.wait(interval):
            if not self.heartbeat():
                return

    def heartbeat(self) -> bool:
        info = read_lock_info(self.path)
        if info is None or info.get("nonce") != self.nonce:
            self.lost = True
            return False
        with contextlib.suppress(FileNotFoundError):
            os.utime(self.path)
        return True

    def check(self) -> None:
        """Fail if the lock was lost (taken over after we stalled)."""
        if self.lost:
            raise LeaseLostError(f"lock {self.name!r} was lost; nothing more is written under it")

    # -------------------------------------------------------------- release
    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        info = read_lock_info(self.path)
        if info is not None and info.get("nonce") == self.nonce:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self.nonce = None

    def __enter__(self) -> "FileLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def list_locks(lock_dir: Path) -> list[dict]:
    out = []
    try:
        names = sorted(os.listdir(lock_dir))
    except FileNotFoundError:
        return out
    for fname in names:
        if not fname.endswith(".lock"):
            continue
        info = read_lock_info(Path(lock_dir) / fname)
        if info is None:
            continue
        out.append({
            "name": lock_name_from_file(fname),
            "holder": info.get("holder"),
            "host": info.get("host"),
            "pid": info.get("pid"),
            "acquiredAt": info.get("acquiredAt"),
            "ttlMs": info.get("ttlMs"),
            "stale": _is_stale(info),
        })
    return out


def force_release(lock_dir: Path, name: str) -> bool:
    path = Path(lock_dir) / lock_file_name(name)
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False
