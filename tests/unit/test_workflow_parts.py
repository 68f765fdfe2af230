"""The pure pieces of the engine: the condition algebra, forEach names,
the scheduler's lanes and caps, JUnit output."""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET

import pytest

from swamp.errors import ValidationError
from swamp.workflows import conditions, foreach
from swamp.workflows.records import AssertResult, JobRun, StepRun, WorkflowRun
from swamp.workflows.scheduler import Gate, Unit, run_parallel, run_units
from swamp.workflows.schema import Condition


def c(t, *subs) -> Condition:
    if t in ("and", "or"):
        return Condition(type=t, conditions=list(subs))
    if t == "not":
        return Condition(type=t, condition=subs[0])
    return Condition(type=t)


@pytest.mark.parametrize("cond, succeeded, failed, skipped", [
    (c("always"), True, True, True),
    (c("succeeded"), True, False, False),
    (c("failed"), False, True, False),
    (c("completed"), True, True, False),
    (c("skipped"), False, False, True),
    (c("not", c("succeeded")), False, True, True),
    (c("and", c("completed"), c("not", c("failed"))), True, False, False),
    (c("or", c("failed"), c("skipped")), False, True, True),
])
def test_each_condition_type(cond, succeeded, failed, skipped):
    assert [conditions.holds(cond, s) for s in ("succeeded", "failed", "skipped")] == [succeeded, failed, skipped]


def test_a_group_status():
    assert conditions.aggregate(["succeeded", "succeeded"]) == "succeeded"
    assert conditions.aggregate(["succeeded", "skipped"]) == "succeeded"
    assert conditions.aggregate(["skipped", "skipped"]) == "skipped"
    assert conditions.aggregate(["succeeded", "failed", "skipped"]) == "failed"
    assert conditions.aggregate(["succeeded", "waiting_approval"]) == "pending"
    assert conditions.aggregate([]) == "succeeded"


def test_skip_reasons():
    assert conditions.skip_reason(c("succeeded")) == "dependency"
    assert conditions.skip_reason(c("failed")) == "condition"


# ----------------------------------------------------------------- forEach
def names(name, value, render=None):
    return [x.name for x in foreach.expand(name, value, render)]


def test_foreach_names_follow_the_rules():
    assert names("say", ["a", "b"]) == ["say-a", "say-b"]
    assert names("n", [3, 1.5]) == ["n-3", "n-1.5"]
    assert names("e", {"prod": 1, "dev": 2}) == ["e-dev", "e-prod"]  # map entries in key order
    assert names("o", [{"x": 1}, [2], True, None]) == ["o-0", "o-1", "o-2", "o-3"]
    assert names("t", ["a", "b"], lambda item: f"deploy-{item.upper()}") == ["deploy-A", "deploy-B"]
    assert names("t", [], None) == []


def test_foreach_items():
    assert [x.item for x in foreach.expand("e", {"b": 2, "a": 1}, None)] == [
        {"key": "a", "value": 1}, {"key": "b", "value": 2}]
    assert [x.item for x in foreach.expand("l", ["x", {"y": 1}], None)] == ["x", {"y": 1}]


def test_foreach_refuses_what_it_cannot_name():
    with pytest.raises(ValidationError, match="two items give the step name 'say-a'"):
        foreach.expand("say", ["a", "a"], None)
    with pytest.raises(ValidationError, match="must give a list or a map, not str"):
        foreach.expand("say", "abc", None)
    with pytest.raises(ValidationError, match="empty step name"):
        foreach.expand("say", ["a"], lambda item: "")


# --------------------------------------------------------------- scheduler
class Probe:
    """Counts how many units run at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.now = 0
        self.max = 0
        self.order: list = []

    def unit(self, lane, gate, tag, sleep=0.02):
        def run():
            with self.lock:
                self.now += 1
                self.max = max(self.max, self.now)
                self.order.append(tag)
            time.sleep(sleep)
            with self.lock:
                self.now -= 1
        return Unit(lane, gate, run)


def test_a_gate_caps_units_running_at_once():
    p = Probe()
    gate = Gate(2)
    run_units([p.unit(i, gate, i) for i in range(6)], threading.Event(), lambda: False)
    assert p.max == 2 and sorted(p.order) == list(range(6))


def test_units_of_one_lane_run_in_order_one_at_a_time():
    p = Probe()
    gate = Gate(0)
    run_units([p.unit("m", gate, i, 0.005) for i in range(5)], threading.Event(), lambda: False)
    assert p.order == [0, 1, 2, 3, 4] and p.max == 1


def test_separate_gates_each_cap_their_units():
    p = Probe()
    a, b = Gate(1), Gate(3)
    run_units([p.unit(("a", i), a, i) for i in range(3)] + [p.unit(("b", i), b, i) for i in range(3)],
              threading.Event(), lambda: False)
    assert p.max == 4


def test_stopping_passes_over_the_units_not_started():
    p = Probe()
    stop = threading.Event()
    units = [p.unit("m", Gate(0), i, 0) for i in range(5)]
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) > 2

    run_units(units, stop, should_stop)
    assert p.order == [0, 1]


def test_jobs_in_parallel_within_a_cap():
    p = Probe()
    tasks = [p.unit(i, Gate(0), i).run for i in range(4)]
    run_parallel(tasks, 2, threading.Event())
    assert p.max == 2
    p = Probe()
    run_parallel([p.unit(i, Gate(0), i).run for i in range(4)], 0, threading.Event())
    assert p.max == 4


# ------------------------------------------------------------------- JUnit
def test_junit_report_has_a_testcase_per_step():
    from swamp.workflows.junit import junit_xml

    run = WorkflowRun(id="r", workflowId="w", workflowName="wf", startedAt="t", status="failed", durationMs=1500,
                      jobs=[JobRun(name="j", status="failed", steps=[
                          StepRun(name="ok", task="assert", status="succeeded", durationMs=250),
                          StepRun(name="bad", task="assert", status="failed", error="assertion failed <&>",
                                  assertResult=AssertResult(passed=False, severity="high")),
                          StepRun(name="skip", task="assert", status="skipped", skipReason="guarded",
                                  detail="the guard is true"),
                          StepRun(name="wait", task="manual_approval", status="waiting_approval")])])
    root = ET.fromstring(junit_xml(run))
    assert root.tag == "testsuites" and root.get("tests") == "4" and root.get("failures") == "1"
    assert root.get("skipped") == "2" and root.get("time") == "1.500"
    suite = root.find("testsuite")
    assert suite.get("name") == "wf.j"
    cases = {tc.get("name"): tc for tc in suite.findall("testcase")}
    assert cases["ok"].get("time") == "0.250" and list(cases["ok"]) == []
    assert cases["bad"].find("failure").get("message") == "assertion failed <&>"
    assert cases["skip"].find("skipped").get("message") == "guarded: the guard is true"
    assert cases["wait"].find("skipped").get("message") == "waiting_approval"
