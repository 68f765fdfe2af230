"""`workflow validate` warns of an approval or a signal that gates nothing:
steps of a job run at once unless they declare dependsOn."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, write_shell, write_workflow

SHIP = "{name: ship, %stask: {type: model_method, modelIdOrName: ship, methodName: execute}}"


@pytest.fixture
def repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    write_shell(repo, "ship", "type: command/shell\nname: ship\nglobalArguments: {run: 'echo shipped'}\n")
    return repo


def _warnings(repo, body: str) -> list[str]:
    write_workflow(repo, "w", body)
    shown = cli(repo, "workflow", "validate", "w")
    assert shown.code == 0, shown  # a warning, not an error
    return shown.data["workflows"][0]["warnings"]


@pytest.mark.parametrize("gate", ["{type: manual_approval, prompt: 'ship?'}", "{type: wait_for_signal}"])
def test_a_gate_no_step_depends_on_is_warned_of(repo, gate):
    warnings = _warnings(repo, f"""
        jobs:
          - name: main
            steps:
              - {{name: gate, task: {gate}}}
              - {SHIP % ""}
    """)
    assert len(warnings) == 1, warnings
    assert "gates nothing: step 'ship' of job 'main' runs without waiting for it" in warnings[0]
    assert "dependsOn: [{step: gate}]" in warnings[0]


def test_a_gate_a_step_depends_on_is_fine(repo):
    assert _warnings(repo, f"""
        jobs:
          - name: main
            steps:
              - {{name: gate, task: {{type: manual_approval, prompt: 'ship?'}}}}
              - {SHIP % "dependsOn: [{step: gate}], "}
    """) == []


def test_a_gate_whose_job_a_later_job_waits_for_is_fine(repo):
    assert _warnings(repo, f"""
        jobs:
          - name: approve
            steps:
              - {{name: gate, task: {{type: manual_approval, prompt: 'ship?'}}}}
          - name: deploy
            dependsOn: [{{job: approve}}]
            steps:
              - {SHIP % ""}
    """) == []


def test_a_gate_alone_in_its_job_that_no_job_waits_for_is_warned_of(repo):
    warnings = _warnings(repo, f"""
        jobs:
          - name: approve
            steps:
              - {{name: gate, task: {{type: manual_approval, prompt: 'ship?'}}}}
          - name: deploy
            steps:
              - {SHIP % ""}
    """)
    assert len(warnings) == 1 and "no job depends on job 'approve'" in warnings[0], warnings
