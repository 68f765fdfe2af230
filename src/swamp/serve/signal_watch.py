"""Under serve, a signalled or expired wait resumes its run by itself.

Every replica looks about once a second (``app.signals.resume_ready``):
a suspended run whose wait was settled, or whose deadline passed (then
settled as timed out), is claimed create-only in the datastore under the
wait's lease, as a schedule's tick is, and only the replica whose claim
is published resumes it. So a run resumes once however many replicas
serve. A resume that fails (the datastore did not answer, say) withdraws
its claim, so a later look claims the run again. The resume runs in a thread of its own, counted in flight, so a
shutdown waits for it (and asks it to stop, as any run)."""

from __future__ import annotations

import os
import threading

from swamp.errors import SwampError
from swamp.serve.background import Watch, log as _log

POLL_S = 1.0


class SignalWatch(Watch):
    thread_name = "swamp-signal-watch"

    def __init__(self, state, *, every_s: float = POLL_S) -> None:
        from swamp.util.ids import holder

        super().__init__(state, every_s=every_s)
        self.me = f"{holder()}:{os.getpid()}"

    def loop(self) -> None:
        from swamp.app import signals

        watched = signals.Watched()
        for _ in self.ticks():
            if self.state.shutting_down:
                return
            try:
                signals.resume_ready(self.state.repo, by=self.me, resume=self._resume, watched=watched)
            except SwampError as e:
                _log(f"signal waits not checked: {e.message}")
            except Exception:
                import traceback

                traceback.print_exc()

    def _resume(self, run) -> None:
        from swamp.serve.calls import Call
        from swamp.serve.workflow_routes import step_observer

        state = self.state
        key = state.begin()
        name = run.workflowName

        def go() -> None:
            from swamp.app import workflows

            call = Call(state.repo, {"workflow": name}, {}, {})
            call.note = lambda info: state.note(key, info)
            call.note({"kind": "workflow", "workflow": name, "runId": run.id})
            from swamp.app import signals

            ok = False
            from swamp.serve import vault_grants

            try:
                # it continues for whoever started it (their vault grants too): a signal's sender is
                # recorded in the signal
                with vault_grants.acting_for_starter(state, run.initiatedBy, "signalResume"):
                    result = workflows.resume(state.repo, name, run.id, {}, observer=step_observer(call, name),
                                              by=run.initiatedBy)
                ok = True
                _log(f"signal: resumed run {run.id} of {name}: {result.run.status}")
            except SwampError as e:
                _log(f"signal: run {run.id} of {name} was not resumed: {e.message}")
            except Exception:
                import traceback

                traceback.print_exc()
            finally:
                try:  # a failed resume withdraws its claim: the next look claims the run again
                    signals.resume_finished(state.repo, run.id, ok=ok)
                finally:
                    state.end(key)

        threading.Thread(target=go, name=f"resume {name} {run.id}").start()
