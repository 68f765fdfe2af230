"""Warnings that swamp's code logs reach stderr as ``warning: ...`` lines
(nothing in --json mode), whether logging was loaded before the command
configured the handler or only afterwards (swamp.cli.logs waits for it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))


def _run(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["PYTHONPATH"] = SRC
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


@pytest.mark.parametrize("logging_first", [False, True], ids=["loaded-later", "loaded-before"])
def test_a_logged_warning_is_one_warning_line_and_nothing_in_json_mode(logging_first):
    code = ("import sys\n" + ("import logging\n" if logging_first else "") +
            "from swamp.cli.logs import configure\n"
            "configure(json_mode=False)\n"
            "configure(json_mode=False)\n"
            "import logging, logging.handlers\n"
            "log = logging.getLogger('swamp.somewhere')\n"
            "log.warning('disk %s is slow', 'a')\n"
            "log.info('not shown')\n"
            "configure(json_mode=True)\n"
            "log.warning('not in json mode')\n"
            "configure(json_mode=False)\n"
            "log.warning('shown again')\n"
            "assert len(logging.getLogger('swamp').handlers) == 1\n"
            "assert type(logging.__loader__).__name__ == 'SourceFileLoader', logging.__loader__\n"
            "assert logging.__spec__.loader is logging.__loader__\n"
            "assert not any('swamp' in type(f).__module__ for f in sys.meta_path), sys.meta_path\n")
    p = _run(code)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "warning: disk a is slow\nwarning: shown again\n"


def test_configuring_does_not_load_logging():
    p = _run("import sys\nfrom swamp.cli.logs import configure\nconfigure(json_mode=False)\n"
             "assert 'logging' not in sys.modules\nimport json, re\nassert 'logging' not in sys.modules\n")
    assert p.returncode == 0, p.stderr
