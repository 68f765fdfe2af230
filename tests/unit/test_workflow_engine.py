"""Running workflows in this process: order, caps, conditions, guards,
allowFailure, forEach, asserts, nested workflows, records."""

from __future__ import annotations

import pytest

from swamp.errors import ValidationError
from tests.helpers import (make_repo, max_overlap, run, spans, statuses, steps, write_model,
                                         write_workflow)


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


def work(model, value="", *, sleep=0, fail=False, extra=""):
    """The YAML of a step calling test/work.work on ``model``."""
    inputs = f"{{value: '{value}', sleep: {sleep}, fail: {str(fail).lower()}}}"
    return f"""task: {{type: model_method, modelIdOrName: {model}, methodName: work, inputs: {inputs}}}{extra}"""


# ------------------------------------------------------------------ order
ORDERED = """
jobs:
  - name: late
    dependsOn: [{job: early}]
    steps:
      - {name: z, %s}
  - name: early
    steps:
      - {name: b, weight: 1, %s}
      - {name: a, weight: 1, %s}
      - {name: heavy, weight: -5, %s}
      - {name: after, dependsOn: [{step: a}], %s}
""" % (work("w0", "z"), work("w1", "b"), work("w1", "a"), work("w1", "heavy"), work("w1", "after"))


def test_the_record_lists_jobs_and_steps_in_run_order(repo):
    write_workflow(repo, "ordered", ORDERED)
    r = run(repo, "ordered")
    assert r.status == "succeeded"
    assert list(steps(r)) == ["early/heavy", "early/a", "early/b", "early/after", "late/z"]


def test_steps_of_one_model_write_versions_in_plan_order_every_time(repo):
    write_workflow(repo, "ordered", ORDERED)
    for attempt in range(2):
        run(repo, "ordered")
    w1 = [(version, value) for _, _, value, model, version in spans(repo) if model == "w1"]
    assert sorted(w1) == [(1, "heavy"), (2, "a"), (3, "b"), (4, "after"),
                          (5, "heavy"), (6, "a"), (7, "b"), (8, "after")]


# ------------------------------------------------------------------- caps
def fan(n, sleep=0.15, step_extra="", job_extra="", wf_extra=""):
    lines = "".join(f"      - {{name: s{i}, {work(f'w{i}', str(i), sleep=sleep)}}}\n" for i in range(n))
    return f"{wf_extra}jobs:\n  - name: j\n{job_extra}    steps:\n{lines}"


def test_steps_run_concurrently_up_to_the_default_cap(repo, monkeypatch):
    monkeypatch.delenv("SWAMP_MAX_CONCURRENT_STEPS", raising=False)
    write_workflow(repo, "fan", fan(6))
    assert run(repo, "fan").status == "succeeded"
    assert max_overlap(spans(repo)) == 4


def test_the_environment_sets_the_default_cap(repo, monkeypatch):
    monkeypatch.setenv("SWAMP_MAX_CONCURRENT_STEPS", "2")
    write_workflow(repo, "fan", fan(5, sleep=0.1))
    run(repo, "fan")
    assert max_overlap(spans(repo)) == 2


def test_a_job_cap_wins_over_the_environment(repo, monkeypatch):
    monkeypatch.setenv("SWAMP_MAX_CONCURRENT_STEPS", "1")
    write_workflow(repo, "fan", fan(6, job_extra="    concurrency: 3\n"))
    run(repo, "fan")
    assert max_overlap(spans(repo)) == 3


def test_a_workflow_cap_applies_to_jobs_and_their_steps(repo, monkeypatch):
    monkeypatch.delenv("SWAMP_MAX_CONCURRENT_STEPS", raising=False)
    write_workflow(repo, "fan", fan(4, sleep=0.1, wf_extra="concurrency: 1\n"))
    run(repo, "fan")
    assert max_overlap(spans(repo)) == 1


def test_a_step_cap_limits_its_foreach_expansions(repo):
    write_workflow(repo, "each", """
        jobs:
          - name: j
            concurrency: 5
            steps:
              - name: each
                concurrency: 2
                forEach: {item: m, in: "${{ ['w0', 'w1', 'w2', 'w3', 'w4'] }}"}
                task:
                  type: model_method
                  modelIdOrName: "${{ self.m }}"
                  methodName: work
                  inputs: {sleep: 0.12, value: "${{ self.m }}"}
        """)
    r = run(repo, "each")
    assert list(steps(r)) == [f"j/each-w{i}" for i in range(5)]
    assert max_overlap(spans(repo)) == 2


def test_jobs_of_one_level_run_in_parallel(repo, monkeypatch):
    monkeypatch.delenv("SWAMP_MAX_CONCURRENT_STEPS", raising=False)
    write_workflow(repo, "jobs", "jobs:\n" + "".join(
        f"  - name: j{i}\n    steps:\n      - {{name: s, {work(f'w{i}', sleep=0.15)}}}\n" for i in range(3)))
    run(repo, "jobs")
    assert max_overlap(spans(repo)) == 3


def test_parallel_jobs_writing_one_model_never_lose_or_reuse_a_version(repo):
    # Two jobs of one level are separate lanes: their steps on w0 contend
    # for the model's lock for real.
    write_workflow(repo, "contend", "jobs:\n" + "".join(
        f"  - name: j{i}\n    steps:\n"
        + "".join(f"      - {{name: s{k}, {work('w0', f'{i}-{k}', sleep=0.01)}}}\n" for k in range(4))
        for i in range(3)))
    assert run(repo, "contend").status == "succeeded"
    found = [(v, value) for _, _, value, model, v in spans(repo) if model == "w0"]
    assert sorted(v for v, _ in found) == list(range(1, 13))
    assert sorted(value for _, value in found) == sorted(f"{i}-{k}" for i in range(3) for k in range(4))


# ------------------------------------------------------------- conditions
def cond_wf(source_fails: bool, condition: str) -> str:
    return f"""
jobs:
  - name: j
    steps:
      - {{name: src, allowFailure: true, {work('w0', fail=source_fails)}}}
      - name: dep
        dependsOn: [{{step: src, condition: {condition}}}]
        {work('w1')}
"""


@pytest.mark.parametrize("condition, on_success, on_failure", [
    ("{type: succeeded}", "succeeded", ("skipped", "dependency")),
    ("{type: failed}", ("skipped", "condition"), "succeeded"),
    ("{type: completed}", "succeeded", "succeeded"),
    ("{type: always}", "succeeded", "succeeded"),
    ("{type: skipped}", ("skipped", "condition"), ("skipped", "condition")),
    ("{type: not, condition: {type: failed}}", "succeeded", ("skipped", "condition")),
    ("{type: and, conditions: [{type: completed}, {type: failed}]}", ("skipped", "condition"), "succeeded"),
    ("{type: or, conditions: [{type: succeeded}, {type: skipped}]}", "succeeded", ("skipped", "condition")),
])
def test_each_condition_type_on_a_step_dependency(repo, condition, on_success, on_failure):
    for fails, expected in ((False, on_success), (True, on_failure)):
        write_workflow(repo, "cond", cond_wf(fails, condition))
        dep = steps(run(repo, "cond"))["j/dep"]
        got = (dep.status, dep.skipReason) if dep.status == "skipped" else dep.status
        assert got == expected, (condition, fails)


def test_skipped_dependencies_propagate_and_a_skipped_condition_sees_them(repo):
    write_workflow(repo, "chain", f"""
        jobs:
          - name: j
            steps:
              - {{name: a, guard: "${{{{ true }}}}", {work('w0')}}}
              - {{name: b, dependsOn: [{{step: a}}], {work('w1')}}}
              - {{name: c, dependsOn: [{{step: b, condition: {{type: skipped}}}}], {work('w2')}}}
        """)
    r = run(repo, "chain")
    assert (steps(r)["j/a"].skipReason, steps(r)["j/b"].skipReason) == ("guarded", "dependency")
    assert steps(r)["j/c"].status == "succeeded"
    assert r.status == "succeeded"


def test_job_dependencies_and_conditions(repo):
    write_workflow(repo, "jobs", f"""
        jobs:
          - name: build
            steps:
              - {{name: s, {work('w0', fail=True)}}}
          - name: deploy
            dependsOn: [{{job: build}}]
            steps:
              - {{name: s, {work('w1')}}}
          - name: notify
            dependsOn: [{{job: build, condition: {{type: failed}}}}]
            steps:
              - {{name: s, {work('w2')}}}
          - name: after-deploy
            dependsOn: [{{job: deploy, condition: {{type: succeeded}}}}]
            steps:
              - {{name: s, {work('w3')}}}
        """)
    r = run(repo, "jobs")
    jobs = {j.name: (j.status, j.skipReason) for j in r.jobs}
    assert jobs == {"build": ("failed", None), "deploy": ("skipped", "dependency"),
                    "notify": ("succeeded", None), "after-deploy": ("skipped", "dependency")}
    assert statuses(r)["deploy/s"] == "skipped"
    assert r.status == "failed" and r.failedStep == "build/s" and "asked to fail" in r.failureReason


# ------------------------------------------------- guard and allowFailure
def test_guards(repo):
    write_workflow(repo, "guards", f"""
        inputs:
          properties:
            skip: {{type: boolean, default: false}}
        jobs:
          - name: j
            steps:
              - {{name: on-input, guard: "${{{{ inputs.skip }}}}", {work('w0')}}}
              - {{name: bare-cel, guard: "inputs.skip == false", {work('w1')}}}
              - {{name: never, guard: false, {work('w2')}}}
              - {{name: broken, guard: "${{{{ inputs.skip.deeper }}}}", {work('w3')}}}
        """)
    r = run(repo, "guards", {"skip": True})
    s = steps(r)
    assert (s["j/on-input"].status, s["j/on-input"].skipReason) == ("skipped", "guarded")
    assert (s["j/bare-cel"].status, s["j/bare-cel"].skipReason) == ("succeeded", None)
    assert s["j/never"].status == "succeeded"
    assert s["j/broken"].status == "failed" and "jobs[0].steps[3].guard" in s["j/broken"].error
    r = run(repo, "guards")
    assert steps(r)["j/on-input"].status == "succeeded" and steps(r)["j/bare-cel"].skipReason == "guarded"


def test_allow_failure_records_the_failure_but_not_for_the_job(repo):
    write_workflow(repo, "allowed", f"""
        jobs:
          - name: j
            steps:
              - {{name: flaky, allowFailure: true, {work('w0', 'x', fail=True)}}}
              - {{name: after, dependsOn: [{{step: flaky}}], {work('w1')}}}
              - {{name: anyway, dependsOn: [{{step: flaky, condition: {{type: completed}}}}], {work('w2')}}}
        """)
    r = run(repo, "allowed")
    s = steps(r)
    assert s["j/flaky"].status == "failed" and s["j/flaky"].allowedFailure is True
    assert "asked to fail (x)" in s["j/flaky"].error and s["j/flaky"].outputId
    assert s["j/after"].skipReason == "dependency" and s["j/anyway"].status == "succeeded"
    assert r.jobs[0].status == "succeeded" and r.status == "succeeded" and r.failedStep is None


# ---------------------------------------------------------------- forEach
def test_foreach_over_a_map_and_a_dependency_on_all_expansions(repo):
    write_workflow(repo, "envs", """
        inputs:
          properties:
            targets: {type: object}
        jobs:
          - name: j
            steps:
              - name: deploy
                forEach: {item: env, in: "${{ inputs.targets }}"}
                task:
                  type: model_method
                  modelIdOrName: "${{ self.env.value }}"
                  methodName: work
                  inputs: {value: "${{ self.env.key }}"}
              - name: "check-${{ self.n }}"
                forEach: {item: n, in: [1, 2]}
                dependsOn: [{step: deploy}]
                task: {type: assert, expr: "${{ self.n > 0 }}", message: positive}
        """)
    r = run(repo, "envs", {"targets": {"prod": "w1", "dev": "w0"}})
    assert list(steps(r)) == ["j/deploy-dev", "j/deploy-prod", "j/check-1", "j/check-2"]
    assert steps(r)["j/deploy-prod"].item == {"key": "prod", "value": "w1"}
    assert steps(r)["j/deploy-prod"].forEachOf == "deploy" and steps(r)["j/deploy-prod"].model == "w1"
    assert sorted((m, v) for _, _, v, m, _ in spans(repo)) == [("w0", "dev"), ("w1", "prod")]
    assert r.status == "succeeded"


def test_a_failed_expansion_fails_the_group_for_its_dependents(repo):
    write_workflow(repo, "group", f"""
        jobs:
          - name: j
            steps:
              - name: each
                forEach: {{item: f, in: [false, true, false]}}
                task:
                  type: model_method
                  modelIdOrName: w0
                  methodName: work
                  inputs: {{fail: "${{{{ self.f }}}}"}}
              - {{name: after, dependsOn: [{{step: each}}], {work('w1')}}}
              - {{name: cleanup, dependsOn: [{{step: each, condition: {{type: failed}}}}], {work('w2')}}}
        """)
    r = run(repo, "group")
    assert statuses(r) == {"j/each-0": "succeeded", "j/each-1": "failed", "j/each-2": "succeeded",
                           "j/after": "skipped", "j/cleanup": "succeeded"}
    assert r.status == "failed"


def test_a_bad_foreach_fails_the_step_with_its_place(repo):
    write_workflow(repo, "bad", """
        jobs:
          - name: j
            steps:
              - name: each
                forEach: {item: x, in: "${{ 'not a list' }}"}
                task: {type: assert, expr: "true", message: m}
        """)
    r = run(repo, "bad")
    assert statuses(r) == {"j/each": "failed"}
    assert "must give a list or a map, not str" in steps(r)["j/each"].error


# ----------------------------------------------------------------- asserts
ASSERTS = """
inputs:
  properties:
    n: {type: integer}
jobs:
  - name: j
    steps:
      - name: low
        task: {type: assert, expr: "${{ inputs.n > 1 }}", message: "n is ${{ inputs.n }}", severity: low}
      - name: high
        task: {type: assert, expr: "inputs.n > 0", message: "n must be positive"}
"""


@pytest.mark.parametrize("n, fail_on, run_status, low, high", [
    (5, "low", "succeeded", "succeeded", "succeeded"),
    (1, "low", "failed", ("failed", True), "succeeded"),
    (1, "medium", "succeeded", ("failed", False), "succeeded"),
    (0, "high", "failed", ("failed", False), ("failed", True)),
])
def test_asserts_fail_the_run_by_severity(repo, n, fail_on, run_status, low, high):
    write_workflow(repo, "asserts", ASSERTS)
    r = run(repo, "asserts", {"n": n}, fail_on=fail_on)
    assert r.status == run_status and r.failOn == fail_on
    for name, want in (("low", low), ("high", high)):
        s = steps(r)[f"j/{name}"]
        if want == "succeeded":
            assert s.status == "succeeded" and s.assertResult.passed
        else:
            assert s.status == "failed" and s.assertResult.failsRun is want[1]
            assert bool(s.allowedFailure) is (not want[1])
    if low != "succeeded":
        assert steps(r)["j/low"].assertResult.message == f"n is {n}"


def test_an_assert_must_give_a_boolean(repo):
    write_workflow(repo, "notbool", """
        jobs:
          - name: j
            steps:
              - {name: a, task: {type: assert, expr: "${{ 'yes' }}", message: m}}
        """)
    s = steps(run(repo, "notbool"))["j/a"]
    assert s.status == "failed" and "must give true or false" in s.error


# -------------------------------------------------------- nested workflows
def test_a_nested_workflow_runs_as_its_own_run(repo):
    write_workflow(repo, "child", """
        inputs:
          properties:
            v: {type: string}
          required: [v]
        jobs:
          - name: c
            steps:
              - name: s
                task: {type: model_method, modelIdOrName: w1, methodName: work, inputs: {value: "${{ inputs.v }}"}}
        """)
    write_workflow(repo, "parent", """
        jobs:
          - name: p
            steps:
              - {name: call, task: {type: workflow, workflowIdOrName: child, inputs: {v: from-parent}}}
        """)
    r = run(repo, "parent")
    s = steps(r)["p/call"]
    assert r.status == "succeeded" and s.status == "succeeded" and s.childWorkflow == "child"
    from swamp.repo.context import Repo
    from swamp.workflows import records

    child = records.load(Repo.open(repo).datastore, s.childWorkflowId, s.childRunId)
    assert child.status == "succeeded" and child.parentRunId == r.id and child.depth == 1
    assert [v for _, _, v, _, _ in spans(repo)] == ["from-parent"]


def test_a_failing_nested_run_fails_its_step(repo):
    write_workflow(repo, "child", f"jobs:\n  - name: c\n    steps:\n      - {{name: s, {work('w0', fail=True)}}}\n")
    write_workflow(repo, "parent", "jobs:\n  - name: p\n    steps:\n"
                   "      - {name: call, task: {type: workflow, workflowIdOrName: child}}\n")
    r = run(repo, "parent")
    assert r.status == "failed" and "nested run" in steps(r)["p/call"].error and "failed" in r.failureReason


def test_a_cycle_is_refused_before_the_run(repo):
    write_workflow(repo, "a", "jobs:\n  - name: j\n    steps:\n"
                   "      - {name: s, task: {type: workflow, workflowIdOrName: b}}\n")
    write_workflow(repo, "b", "jobs:\n  - name: j\n    steps:\n"
                   "      - {name: s, task: {type: workflow, workflowIdOrName: a}}\n")
    with pytest.raises(ValidationError, match="workflow cycle: a -> b -> a"):
        run(repo, "a")
    assert not (repo / ".swamp" / "workflow-runs").exists()


def test_a_cycle_through_an_expression_fails_at_run_time(repo):
    write_workflow(repo, "self-ref", """
        inputs:
          properties:
            target: {type: string}
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: workflow, workflowIdOrName: "${{ inputs.target }}", inputs: {target: x}}}
        """)
    r = run(repo, "self-ref", {"target": "self-ref"})
    assert r.status == "failed" and "workflow cycle: self-ref -> self-ref" in steps(r)["j/s"].error


def test_nesting_is_limited_to_ten_levels(repo):
    for i in range(12):
        task = (f"{{type: workflow, workflowIdOrName: n{i + 1}}}" if i < 11
                else "{type: assert, expr: 'true', message: m}")
        write_workflow(repo, f"n{i}", f"jobs:\n  - name: j\n    steps:\n      - {{name: s, task: {task}}}\n")
    r = run(repo, "n0")
    assert r.status == "failed"
    from swamp.repo.context import Repo
    from swamp.workflows import records

    ds = Repo.open(repo).datastore
    depth, current = 0, r
    while steps(current)["j/s"].childRunId:
        s = steps(current)["j/s"]
        current = records.load(ds, s.childWorkflowId, s.childRunId)
        depth += 1
    assert depth == 10
    assert "nest deeper than 10" in steps(current)["j/s"].error
    r = run(repo, "n2")  # nine levels below n2: fine
    assert r.status == "succeeded"


# -------------------------------------------------------------- records
def test_inputs_are_refused_by_name_before_anything_is_written(repo):
    write_workflow(repo, "needs", """
        inputs:
          properties:
            greeting: {type: string}
            count: {type: integer}
          required: [greeting]
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: assert, expr: "true", message: m}}
        """)
    with pytest.raises(ValidationError, match="greeting: required input is missing") as e:
        run(repo, "needs")
    with pytest.raises(ValidationError, match="greting: unknown input") as e:
        run(repo, "needs", {"greting": "x"})
    assert e.value.hint == "did you mean 'greeting'?"
    assert not (repo / ".swamp" / "workflow-runs").exists()


def test_the_record_and_log_are_stored_in_the_datastore_in_their_final_state(repo):
    write_workflow(repo, "rec", f"inputs:\n  properties:\n    x: {{type: string}}\n"
                   f"jobs:\n  - name: j\n    steps:\n      - {{name: s, {work('w0')}}}\n")
    r = run(repo, "rec", {"x": "secret-ish"})
    from swamp.repo.context import Repo
    from swamp.workflows import records

    ds = Repo.open(repo).datastore
    stored = records.load(ds, r.workflowId, r.id)
    assert stored.to_json() == r.to_json()
    assert stored.status == "succeeded" and stored.completedAt and stored.inputKeys == ["x"]
    assert stored.inputs is None  # values are kept only while a run is suspended
    assert (repo / ".swamp" / records.record_path(r.workflowId, r.id)).is_file()
    log = records.read_log(ds, r.workflowId, r.id)
    assert "step j/s: succeeded" in log and f"run {r.id}: succeeded" in log
    # The method's own output record knows the workflow run.
    from swamp.models.outputs import find_record

    _, out = find_record(ds, steps(r)["j/s"].outputId)
    assert (out.triggeredBy, out.workflowRunId, out.workflowName, out.stepName) == ("workflow", r.id, "rec", "s")


def test_a_step_that_cannot_be_prepared_fails_with_the_reason(repo):
    write_model(repo, "strict", "inputs:\n  properties:\n    value: {type: string}\n  required: [value]\n"
                "globalArguments:\n  value: \"${{ inputs.value }}\"\n")
    write_workflow(repo, "prep", """
        inputs:
          properties:
            m: {type: string}
        jobs:
          - name: j
            steps:
              - {name: missing-model, task: {type: model_method, modelIdOrName: "${{ inputs.m }}", methodName: work}}
              - {name: missing-input, task: {type: model_method, modelIdOrName: strict, methodName: work, inputs: "${{ {} }}"}}
        """)
    r = run(repo, "prep", {"m": "w9"})
    assert "no model named 'w9'" in steps(r)["j/missing-model"].error
    assert "value: required input is missing" in steps(r)["j/missing-input"].error
    assert r.status == "failed"


# ------------------------------------------------------------- namespaces
def test_every_namespace_a_step_sees(repo, monkeypatch):
    monkeypatch.setenv("SWAMP_TEST_COLOUR", "teal")
    write_model(repo, "cfg", "globalArguments:\n  value: configured\n")
    write_workflow(repo, "spaces", """
        tags: {team: blue}
        inputs:
          properties:
            who: {type: string, default: ann}
        jobs:
          - name: first
            steps:
              - {name: seed, task: {type: model_method, modelIdOrName: w0, methodName: work, inputs: {value: seeded}}}
          - name: second
            dependsOn: [{job: first}]
            steps:
              - name: "use-${{ self.n }}"
                forEach: {item: n, in: [1]}
                task:
                  type: model_method
                  modelIdOrName: w1
                  methodName: work
                  inputs:
                    value: >-
                      ${{ inputs.who }}|${{ self.n }}|${{ run.workflowName }}|${{ run.tags.team }}|${{ run.id }}|${{ env.SWAMP_TEST_COLOUR }}|${{ model.cfg.input.globalArguments.value }}|${{ model["w0"].type }}|${{ data.latest('w0', 'span').content.value }}|${{ size(data.listVersions('w0', 'span')) }}
        """)
    r = run(repo, "spaces")
    assert r.status == "succeeded", steps(r)
    value = [v for _, _, v, m, _ in spans(repo) if m == "w1"][0]
    assert value == f"ann|1|spaces|blue|{r.id}|teal|configured|test/work|seeded|1"


def test_an_expression_error_names_the_file_the_field_and_the_expression(repo):
    write_workflow(repo, "oops", """
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: model_method, modelIdOrName: w0, methodName: work, inputs: {value: "${{ [1][5] }}"}}}
        """)
    error = steps(run(repo, "oops"))["j/s"].error
    assert error.startswith("workflows/workflow-oops.yaml: jobs[0].steps[0].task.inputs.value: ${{ [1][5] }}")


def test_a_cycle_deeper_down_names_every_workflow_on_it(repo):
    write_workflow(repo, "top", """
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: workflow, workflowIdOrName: mid}}
        """)
    write_workflow(repo, "mid", """
        inputs:
          properties:
            again: {type: string, default: mid}
        jobs:
          - name: j
            steps:
              - {name: s, task: {type: workflow, workflowIdOrName: "${{ inputs.again }}"}}
        """)
    r = run(repo, "top")
    from swamp.repo.context import Repo
    from swamp.workflows import records

    s = steps(r)["j/s"]
    child = records.load(Repo.open(repo).datastore, s.childWorkflowId, s.childRunId)
    assert "workflow cycle: top -> mid -> mid" in steps(child)["j/s"].error


def test_a_step_sees_what_the_steps_before_it_in_its_lane_wrote(repo):
    write_workflow(repo, "seq", """
        jobs:
          - name: j
            steps:
              - name: each
                forEach: {item: i, in: [1, 2, 3]}
                guard: "${{ size(data.listVersions('w0', 'span')) > 1 }}"
                task:
                  type: model_method
                  modelIdOrName: w0
                  methodName: work
                  inputs: {value: "${{ self.i }} after ${{ size(data.listVersions('w0', 'span')) }}"}
        """)
    r = run(repo, "seq")
    assert statuses(r) == {"j/each-1": "succeeded", "j/each-2": "succeeded", "j/each-3": "skipped"}
    assert [v for _, _, v, _, _ in spans(repo)] == ["1 after 0", "2 after 1"]
