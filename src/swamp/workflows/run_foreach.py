"""A forEach step's expansion during a run: its ``in`` rendered, one entry
per item (its name rendered for the item when it holds an expression)
in place of the step's one placeholder entry in the record
(workflows/foreach.py makes the names)."""

from __future__ import annotations

from swamp.errors import SwampError
from swamp.workflows import foreach
from swamp.workflows.records import StepRun
from swamp.workflows.run_state import JobState
from swamp.workflows.schema import Step


def expand(ex, st: JobState, step: Step, placeholder: StepRun, where: str) -> list[StepRun]:
    from swamp.expr.template import has_expressions

    state = ex.state
    var = step.forEach.item
    try:
        value = ex.scope.render(step.forEach.in_, f"{where}.forEach.in")
        render_name = None
        if has_expressions(step.name):
            def render_name(item):
                return ex.scope.render(step.name, f"{where}.name", {var: item})
        expansions = foreach.expand(step.name, value, render_name)
    except SwampError as e:
        state.set_failed(st, placeholder, e.message, step)
        return []
    new = [StepRun(name=x.name, task=step.task.type, forEachOf=step.name, item=x.item) for x in expansions]
    with state.lock:
        steps = st.record.steps
        i = steps.index(placeholder)
        steps[i:i + 1] = new
    state.log(f"step {st.record.name}/{foreach_label(step.name, new)}: {len(new)} item(s)")
    return new


def foreach_label(name: str, items: list[StepRun], shown: int = 5) -> str:
    """How the log names a forEach step once expanded: its items' rendered
    names (``deploy-eu, deploy-us``), not the ``deploy-${{ self.region }}``
    they came from (the first few, then how many more)."""
    from swamp.expr.template import has_expressions

    if not items or not has_expressions(name):
        return name
    names = [x.name for x in items[:shown]]
    more = len(items) - len(names)
    return ", ".join(names) + (f" (+{more} more)" if more else "")
