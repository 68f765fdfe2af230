"""The transfer bar: drawn on a terminal only, honest about what moved."""

from __future__ import annotations

import io

from swamp.cli.options import CliState
from swamp.cli.progress import TransferBar, progress_for


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_bar_in_json_mode_quiet_mode_or_a_pipe():
    assert progress_for(CliState(json=True), Tty()) is None
    assert progress_for(CliState(quiet=True), Tty()) is None
    assert progress_for(CliState(), io.StringIO()) is None
    assert isinstance(progress_for(CliState(), Tty()), TransferBar)


def test_the_bar_ends_each_phase_on_its_totals():
    out = Tty()
    bar = TransferBar(out, interval=3600)  # throttled: only starts and ends are drawn
    bar("download", 0, 3, 0, 3072)
    for i in range(1, 4):
        bar("download", i, 3, i * 1024, 3072)
    bar("upload", 0, 1, 0, 10)
    bar("upload", 1, 1, 10, 10)
    lines = [line.split("\r")[-1] for line in out.getvalue().split("\n") if line]
    assert lines == [
        "download [########################] 3/3 files  3.0 KiB/3.0 KiB",
        "upload   [########################] 1/1 files  10 B/10 B",
    ]
