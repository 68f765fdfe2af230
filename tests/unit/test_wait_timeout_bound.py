"""An approval's or a signal wait's timeout is at most 100 years: its
deadline must be a date swamp can write and read back (one far past it is
a typo), so a larger one is refused when the workflow is validated, not as a
traceback when the step starts waiting."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo

WORKFLOW = """name: waits
jobs:
  - name: main
    steps:
      - name: wait
        task: {{type: {kind}, {extra}timeout: {timeout}}}
"""


@pytest.mark.parametrize("kind,extra", [("wait_for_signal", ""), ("manual_approval", "prompt: proceed, ")])
def test_a_timeout_past_a_century_is_refused_at_validation(tmp_path, kind, extra):
    repo = init_repo(tmp_path / "repo")
    (repo / "workflows").mkdir(exist_ok=True)
    path = repo / "workflows" / "workflow-waits.yaml"
    path.write_text(WORKFLOW.format(kind=kind, extra=extra, timeout=99999999999999))
    r = cli(repo, "workflow", "validate", "waits", json=False)
    assert r.code == 1 and "timeout" in r.stdout + r.stderr and "Traceback" not in r.stderr
    path.write_text(WORKFLOW.format(kind=kind, extra=extra, timeout=100 * 365 * 24 * 3600))
    assert cli(repo, "workflow", "validate", "waits", json=False).code == 0
