"""The workflow document: what it accepts, what it refuses and how the
refusal reads; the DAG checks and the deterministic order."""

from __future__ import annotations

import pytest

from swamp.errors import ValidationError
from swamp.util import documents
from swamp.workflows import dag
from swamp.workflows.schema import Workflow, workflow_id

ASSERT = {"type": "assert", "expr": "true", "message": "m"}


def wf(jobs, **extra) -> dict:
    return {"name": "w", "jobs": jobs, **extra}


def step(name, **extra) -> dict:
    return {"name": name, "task": ASSERT, **extra}


def parse(doc) -> Workflow:
    return documents.validate(Workflow, doc, "workflows/workflow-w.yaml")


def refused(doc) -> ValidationError:
    with pytest.raises(ValidationError) as e:
        parse(doc)
    assert e.value.message.startswith("workflows/workflow-w.yaml: ")
    return e.value


def test_the_full_schema_parses():
    w = parse(wf([
        {"name": "build", "weight": 2, "concurrency": 3, "steps": [
            step("a"),
            {"name": "each-${{ self.x }}", "forEach": {"item": "x", "in": "${{ [1, 2] }}"}, "concurrency": 1,
             "guard": "${{ false }}", "allowFailure": True,
             "dependsOn": [{"step": "a", "condition": {"type": "or", "conditions": [
                 {"type": "succeeded"}, {"type": "not", "condition": {"type": "skipped"}}]}}],
             "task": {"type": "model_method", "modelIdOrName": "m", "methodName": "execute",
                      "inputs": {"k": "v"}}},
            {"name": "gate", "task": {"type": "manual_approval", "prompt": "ok?", "timeout": 60}},
            {"name": "nested", "task": {"type": "workflow", "workflowIdOrName": "other", "inputs": {"a": 1}}},
        ]},
        {"name": "deploy", "dependsOn": [{"job": "build"}], "steps": [step("z")]},
    ], description="d", version=2, tags={"team": "x"}, concurrency=2,
        inputs={"properties": {"env": {"type": "string"}}, "required": ["env"]}))
    assert w.jobs[0].steps[1].forEach.in_ == "${{ [1, 2] }}"
    assert w.jobs[1].dependsOn[0].condition.type == "succeeded"  # the default
    assert w.jobs[0].steps[0].task.assert_severity == "high"


def test_an_id_is_derived_from_the_name_when_the_file_has_none():
    a, b = parse(wf([{"name": "j", "steps": [step("s")]}])), parse(wf([{"name": "j", "steps": [step("s")]}]))
    assert workflow_id(a) == workflow_id(b)
    assert workflow_id(parse(wf([{"name": "j", "steps": [step("s")]}], id="abc"))) == "abc"


def test_unknown_keys_are_refused_with_a_hint():
    e = refused(wf([{"name": "j", "steps": [step("s", dependOn=[])]}]))
    assert "jobs[0].steps[0].dependOn: unknown key" in e.message
    assert e.hint == "did you mean 'dependsOn'?"
    e = refused(wf([{"name": "j", "steps": [{"name": "s", "task": {
        "type": "model_method", "modelIdOrName": "m", "methodname": "x"}}]}]))
    assert "jobs[0].steps[0].task.methodname: unknown key" in e.message
    assert e.hint == "did you mean 'methodName'?"
    e = refused(wf([{"name": "j", "steps": [step("s", forEach={"item": "x", "inn": []})]}]))
    assert e.hint == "did you mean 'in'?"


def test_a_bare_string_dependency_is_refused_with_the_fix():
    e = refused(wf([{"name": "a", "steps": [step("s")]},
                    {"name": "b", "dependsOn": ["a"], "steps": [step("t")]}]))
    assert "jobs[1].dependsOn[0]" in e.message
    assert "{job: a, condition: {type: succeeded}}" in e.message
    e = refused(wf([{"name": "a", "steps": [step("s"), step("t", dependsOn=["s"])]}]))
    assert "{step: s, condition: {type: succeeded}}" in e.message


@pytest.mark.parametrize("cond, fragment", [
    ({"type": "and", "conditions": [{"type": "always"}]}, "'and' needs 'conditions' with at least two"),
    ({"type": "or"}, "'or' needs 'conditions'"),
    ({"type": "not"}, "'not' needs one 'condition'"),
    ({"type": "succeeded", "condition": {"type": "always"}}, "'succeeded' takes no nested conditions"),
    ({"type": "sometimes"}, "Input should be 'always'"),
    ("succeeded", "a condition is a map: write {type: succeeded}"),
])
def test_malformed_conditions_are_refused(cond, fragment):
    e = refused(wf([{"name": "a", "steps": [step("s")]},
                    {"name": "b", "dependsOn": [{"job": "a", "condition": cond}], "steps": [step("t")]}]))
    assert fragment in e.message


@pytest.mark.parametrize("task, fragment", [
    ({"type": "model_method", "modelIdOrName": "m"}, "a model_method task needs methodName"),
    ({"type": "assert", "expr": "true"}, "an assert task needs message".replace("an ", "a ")),
    ({"type": "manual_approval", "prompt": "p", "expr": "x"}, "expr does not belong in a manual_approval task"),
    ({"type": "manual_approval", "prompt": "p", "timeout": 0}, "greater than or equal to 1"),
    ({"type": "assert", "expr": "true", "message": "m", "severity": "urgent"}, "'low', 'medium' or 'high'"),
    ({"type": "shell", "run": "ls"}, "'shell' tasks are gone: define a command/shell model"),
    ({"type": "http"}, "Input should be 'model_method', 'workflow', 'manual_approval', 'assert' or 'wait_for_signal'"),
])
def test_tasks_take_exactly_their_keys(task, fragment):
    e = refused(wf([{"name": "j", "steps": [{"name": "s", "task": task}]}]))
    assert fragment in e.message


def test_other_shape_errors():
    assert "at least 1 item" in refused(wf([])).message
    assert "at least 1 item" in refused(wf([{"name": "j", "steps": []}])).message
    assert "must be an identifier" in refused(wf([{"name": "j", "steps": [
        step("s", forEach={"item": "my-item", "in": []})]}])).message
    assert "must match" in refused({"name": "Bad Name", "jobs": [{"name": "j", "steps": [step("s")]}]}).message
    assert "'required' names inputs that 'properties' does not declare: ['x']" in refused(
        wf([{"name": "j", "steps": [step("s")]}], inputs={"properties": {}, "required": ["x"]})).message


# --------------------------------------------------------------------- DAG
def test_levels_order_by_dependencies_then_weight_then_name():
    nodes = [("d", 0, ["b", "c"]), ("c", 0, []), ("b", 5, []), ("a", 5, []), ("e", -1, []), ("f", 0, ["d"])]
    assert dag.levels(nodes) == [["e", "c", "a", "b"], ["d"], ["f"]]
    # A pure function: the order the nodes are listed in does not matter.
    assert dag.levels(list(reversed(nodes))) == dag.levels(nodes)


def test_structure_problems_name_their_place():
    w = parse(wf([
        {"name": "a", "dependsOn": [{"job": "c"}], "steps": [step("s"), step("s")]},
        {"name": "b", "dependsOn": [{"job": "a"}, {"job": "bb"}, {"job": "b"}], "steps": [
            step("x", dependsOn=[{"step": "y"}]), step("y", dependsOn=[{"step": "x"}]),
            step("z", dependsOn=[{"step": "zz"}])]},
        {"name": "c", "dependsOn": [{"job": "b"}], "steps": [step("s")]},
        {"name": "a", "steps": [step("s")]},
    ]))
    problems = [str(p) for p in dag.check_structure(w)]  # each line: "<place>: <message>"
    assert "jobs[3].name: another job is already named 'a'" in problems
    assert "jobs[0].steps[1].name: another step is already named 's'" in problems
    assert "jobs[1].dependsOn[1]: no job named 'bb' (did you mean 'b'?)" not in problems  # own name excluded
    assert any(p.startswith("jobs[1].dependsOn[1]: no job named 'bb'") for p in problems)
    assert "jobs[1].dependsOn[2]: 'b' cannot depend on itself" in problems
    assert "jobs[1].steps[2].dependsOn[0]: no step of job 'b' named 'zz' (did you mean 'z'?)" not in problems
    assert "jobs[1].steps: dependency cycle x -> y -> x" in problems
    assert "jobs: dependency cycle a -> c -> b -> a" in problems


def test_a_valid_workflow_has_no_structure_problems():
    w = parse(wf([{"name": "a", "steps": [step("s"), step("t", dependsOn=[{"step": "s"}])]},
                  {"name": "b", "dependsOn": [{"job": "a"}], "steps": [step("s")]}]))
    assert dag.check_structure(w) == []
    assert dag.job_levels(w) == [["a"], ["b"]]
    assert dag.step_levels(w.jobs[0]) == [["s"], ["t"]]


# ------------------------------------------------------------- properties
from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def dags(draw):
    n = draw(st.integers(1, 12))
    names = [f"n{i}" for i in range(n)]
    nodes = []
    for i, name in enumerate(names):
        deps = draw(st.sets(st.sampled_from(names[:i]), max_size=i)) if i else set()
        nodes.append((name, draw(st.sampled_from([-1, 0, 0, 2])), sorted(deps)))
    order = draw(st.permutations(nodes))
    return nodes, order


@settings(max_examples=200, deadline=None)
@given(dags())
def test_levels_are_a_pure_function_of_the_graph(dag_and_order):
    nodes, shuffled = dag_and_order
    result = dag.levels(nodes)
    assert dag.levels(list(shuffled)) == result
    level_of = {name: i for i, level in enumerate(result) for name in level}
    weights = {name: w for name, w, _ in nodes}
    for name, _, deps in nodes:
        assert all(level_of[d] < level_of[name] for d in deps)
        # Each node runs in the first level its dependencies allow.
        assert level_of[name] == (max((level_of[d] for d in deps), default=-1) + 1)
    for level in result:
        assert level == sorted(level, key=lambda x: (weights[x], x))
    assert dag.find_cycle({name: deps for name, _, deps in nodes}) is None


def test_expression_checks_find_syntax_errors_and_misplaced_self():
    from swamp.workflows.validation import expression_problems

    w = parse(wf([{"name": "j", "steps": [
        step("a", forEach={"item": "i", "in": "${{ self.i }}"}, guard="self.k"),
        {"name": "b-${{ self.x }}", "task": {"type": "assert", "expr": "${{ 1 + }}", "message": "m"}},
        {"name": "c", "guard": "inputs.a ==", "task": {"type": "manual_approval", "prompt": "${{ 'ok' }}"}},
    ]}]))
    problems = [str(p) for p in expression_problems(w)]
    assert "jobs[0].steps[0].forEach.in: 'self' is only set in a forEach step's name, guard and task" in problems
    assert "jobs[0].steps[0].guard: this step's item is self.i, not self.k" in problems
    assert "jobs[0].steps[1].name: 'self' is only set in a forEach step" in problems
    assert any(p.startswith("jobs[0].steps[1].task.expr: ${{ 1 + }}") for p in problems)
    assert any(p.startswith("jobs[0].steps[2].guard: ${{ inputs.a == }}") for p in problems)
    assert len(problems) == 5
