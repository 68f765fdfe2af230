"""``--max-run-duration``: a workflow run going longer is asked to stop, as
`swamp workflow cancel` would: the processes of its steps in flight are
stopped and the engine records it cancelled. A method run (outside a
workflow) over the limit is only reported in the server's log."""

from __future__ import annotations

import time

from swamp.errors import SwampError
from swamp.serve.background import Watch, log as _log


class RunWatchdog(Watch):
    thread_name = "swamp-run-watchdog"

    def __init__(self, state, limit_s: float | None, *, every_s: float = 0.5) -> None:
        super().__init__(state, every_s=every_s)
        self.limit_s = limit_s

    def start(self) -> None:
        if self.limit_s:  # no limit, no thread
            super().start()

    def loop(self) -> None:
        for _ in self.ticks():
            now = time.monotonic()
            with self.state.cond:
                overdue = [(k, dict(v)) for k, v in self.state.inflight.items()
                           if now - v.get("since", now) > self.limit_s and not v.get("stopAsked")]
                for k, _ in overdue:
                    self.state.inflight[k]["stopAsked"] = True
            for _, info in overdue:
                self._stop_run(info)

    def _stop_run(self, info: dict) -> None:
        if info.get("kind") == "workflow" and info.get("runId"):
            from swamp.app import workflows

            try:
                workflows.cancel(self.state.repo, info["workflow"], info["runId"])
                _log(f"run {info['runId']} of {info['workflow']} went over {self.limit_s:g} s: asked it to stop")
            except SwampError as e:
                _log(f"run {info['runId']} went over {self.limit_s:g} s, and could not be cancelled: {e.message}")
        else:
            _log(f"{info.get('kind', 'a request')} {info.get('model', '')}.{info.get('method', '')} went over "
                 f"{self.limit_s:g} s (a method run cannot be stopped half-way)")
