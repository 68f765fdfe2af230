"""What serve says about its triggers: a ``--schedule`` or ``--webhook``
naming a workflow that does not exist is refused at start (it would fail at
every tick or delivery), and the start-up lines list every schedule (with
its next tick) and every webhook, so what a server will run is in plain
sight in its log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from swamp.app.repository import Repo


def check_targets(repo: Repo, schedules, webhooks: dict) -> None:
    """Refuse schedules and webhooks whose workflow is unknown, naming them all."""
    from swamp.app.workflow_files import require

    wrong = []
    for what, workflow in ([(f"--schedule {s.name}", s.workflow) for s in schedules]
                           + [(f"--webhook {h.name}", h.workflow) for h in webhooks.values()]):
        try:
            require(repo, workflow)
        except NotFoundError as e:
            wrong.append(f"{what}: {e.message}" + (f" ({e.hint})" if e.hint else ""))
    if wrong:
        raise UsageError("; ".join(wrong), hint="list the workflows with 'swamp workflow search'")


def startup_lines(settings) -> list[str]:
    """One line per --schedule and webhook, sorted by name. (The workflows'
    own triggers are announced by the scheduler as it finds them, with
    their next tick: serve/scheduler.py.)"""
    from swamp.app.trigger_list import next_fire

    lines = []
    if not settings.triggers:
        lines.append("schedules off (--no-schedules): no trigger or schedule fires here")
    for s in sorted(settings.schedules, key=lambda s: s.name):
        lines.append(f"schedule {s.name}: runs {s.workflow} at {s.cron.text!r} (UTC), next {next_fire(s.cron.text)}")
    for h in sorted(settings.webhooks.values(), key=lambda h: h.name):
        lines.append(f"webhook {h.name}: POST /hooks/{h.name} runs {h.workflow}"
                     + (f" (the body as input {h.input})" if h.input else " (the body as its inputs)"))
    return lines
