"""util/process_output: a child's output read as it comes. Each line reaches
``on_line`` while the child still runs (in the caller's thread), all of both
streams is kept byte for byte as ``communicate`` keeps it, a line too long
to show is replaced by a note (no piece of it, which might hold part of a
secret), and at the timeout ``on_timeout`` is called and the rest read."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from swamp.util import process_output, processes


def _start(script: str, cwd=None) -> subprocess.Popen:
    return subprocess.Popen(["/bin/sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=cwd)


def test_each_line_arrives_while_the_command_still_runs(tmp_path):
    # The command waits for a file the test writes only once it has seen the first line: if lines
    # came at the end only, the command would wait until its timeout.
    proc = _start("echo first; i=0; while [ ! -f go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
                  "[ -f go ] && echo second", cwd=tmp_path)
    seen, threads = [], set()

    def on_line(line: str) -> None:
        seen.append(line)
        threads.add(threading.get_ident())
        if line == "first":
            (tmp_path / "go").write_text("")

    out, err, timed_out = process_output.collect(proc, 30, on_line, on_timeout=lambda: processes.stop(proc, grace=0))
    assert (out, err, timed_out) == (b"first\nsecond\n", b"", False)
    assert seen == ["first", "second"] and threads == {threading.get_ident()}
    assert proc.returncode == 0


def test_both_streams_are_kept_exactly_and_a_last_line_without_newline_is_shown():
    payload = bytes(range(256)) * 300  # binary, past one read
    script = (f"{sys.executable} -c \"import sys; sys.stdout.buffer.write(bytes(range(256)) * 300); "
              f"sys.stdout.flush(); sys.stderr.write('warn\\\\r\\\\nlast')\"")
    seen: list[str] = []
    out, err, timed_out = process_output.collect(_start(script), None, seen.append, on_timeout=lambda: None)
    assert out == payload and err == b"warn\r\nlast" and not timed_out
    assert "warn" in seen and seen[-1] == "last"


@pytest.mark.parametrize("in_pieces", [False, True], ids=["one read", "written in pieces"])
def test_a_line_too_long_to_show_is_a_note_and_none_of_its_pieces(tmp_path, in_pieces):
    secret = "S3CR3T-" + "x" * 20
    long_line = "a" * 20000 + secret + "b" * 20000
    (tmp_path / "out.txt").write_text(f"before\n{long_line}\nafter\n")
    # In pieces: the long line reaches the reader over many reads, its end only in the last.
    script = ("cat out.txt" if not in_pieces else
              f"{sys.executable} -c \"import sys, time; data = open('out.txt').read()\n"
              f"for i in range(0, len(data), 3000):\n"
              f"    sys.stdout.write(data[i:i + 3000]); sys.stdout.flush(); time.sleep(0.005)\"")
    seen: list[str] = []
    out, _, _ = process_output.collect(_start(script, cwd=tmp_path), None, seen.append, lambda: None)
    assert out.decode() == f"before\n{long_line}\nafter\n"
    assert seen[0] == "before" and seen[-1] == "after" and len(seen) == 3, seen
    assert "kept in the output" in seen[1] and "S3CR3T" not in "".join(seen) and "aaaa" not in seen[1]
    assert "bbbb" not in "".join(seen)


def test_at_the_timeout_the_group_is_stopped_and_what_was_written_is_kept():
    proc = _start("echo started; sleep 30")
    stopped = []

    def on_timeout() -> None:
        stopped.append(True)
        processes.stop(proc, grace=0)

    seen: list[str] = []
    out, err, timed_out = process_output.collect(proc, 0.3, seen.append, on_timeout)
    assert timed_out and stopped == [True] and out == b"started\n" and seen == ["started"]
    assert proc.returncode is not None and proc.returncode != 0


def test_without_a_listener_the_output_is_still_collected():
    out, err, timed_out = process_output.collect(_start("echo out; echo err >&2"), 10, None, lambda: None)
    assert (out, err, timed_out) == (b"out\n", b"err\n", False)


def test_a_live_line_is_redacted_and_not_kept_in_the_runs_log():
    from types import SimpleNamespace

    from swamp.models.context import Context
    from swamp.vault import redact

    ctx = Context(None, None, None, SimpleNamespace(ephemeral=None), None)
    shown: list[str] = []
    ctx.on_log = shown.append
    redact.register_secret("hunter2-live-secret")
    try:
        ctx.progress("token is hunter2-live-secret")
    finally:
        redact.clear()
    assert shown and "hunter2-live-secret" not in shown[0] and shown[0].startswith("token is ")
    assert ctx.log_lines == []
    ctx.on_log = None
    ctx.progress("nobody listening")  # nothing to show it to: nothing happens
