"""A child's stdout and stderr read as they come, each complete line handed
on at once (to show a long command's progress: the terminal's activity
line, `swamp serve`'s log events, a worker's step log), while all of both is
kept, as ``communicate`` keeps it.

Lines are handed on in the caller's thread (serve tells a workflow's steps
apart by their thread). A line longer than ``LINE_MAX`` is not handed on in
pieces, which could show part of a secret the redaction of whole lines
would have caught: a note stands for it. POSIX only (``select.poll``), as
``/bin/sh`` is."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Callable

#: the longest line shown live; the output itself keeps every byte
LINE_MAX = 8192
_READ = 65536


def collect(proc: subprocess.Popen, timeout: float | None, on_line: Callable[[str], None] | None,
            on_timeout: Callable[[], None]) -> tuple[bytes, bytes, bool]:
    """(stdout, stderr, timed out) of ``proc``, once both pipes are closed
    and it has exited. At ``timeout`` seconds ``on_timeout()`` is called
    (it stops the process group) and what is still written is read."""
    import select

    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    kept: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    lines = {out_fd: _Lines(on_line), err_fd: _Lines(on_line)} if on_line is not None else {}
    poller = select.poll()
    for fd in kept:
        poller.register(fd, select.POLLIN)
    open_fds = set(kept)
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    while open_fds or proc.poll() is None:
        left = None
        if deadline is not None and not timed_out:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                on_timeout()
                continue
        if not open_fds:  # both pipes closed, the process not yet gone
            try:
                proc.wait(timeout=left)
            except subprocess.TimeoutExpired:
                pass
            continue
        for fd, _event in poller.poll(None if left is None else int(left * 1000) + 1):
            data = os.read(fd, _READ)
            if not data:
                poller.unregister(fd)
                open_fds.discard(fd)
                continue
            kept[fd].append(data)
            if lines:
                lines[fd].feed(data)
    for stream in lines.values():
        if stream.pending:  # a last line without its newline
            stream.feed(b"\n")
    return b"".join(kept[out_fd]), b"".join(kept[err_fd]), timed_out


class _Lines:
    """One stream cut into lines for ``on_line``."""

    __slots__ = ("on_line", "partial", "skipping")

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self.on_line = on_line
        self.partial = b""
        #: the rest of a line too long to show is dropped up to its end
        self.skipping = False

    @property
    def pending(self) -> bool:
        return bool(self.partial)

    def feed(self, data: bytes) -> None:
        *complete, rest = (self.partial + data if self.partial else data).split(b"\n")
        for line in complete:
            if self.skipping:
                self.skipping = False  # the end of the long line: nothing of it is shown
                continue
            self.on_line(_shown(line))
        if self.skipping:
            self.partial = b""
        elif len(rest) > LINE_MAX:
            self.on_line(f"(a line of more than {LINE_MAX} bytes, kept in the output)")
            self.partial, self.skipping = b"", True
        else:
            self.partial = rest


def _shown(line: bytes) -> str:
    if len(line) > LINE_MAX:
        return f"(a line of {len(line)} bytes, kept in the output)"
    return line.decode(errors="replace").rstrip("\r")
