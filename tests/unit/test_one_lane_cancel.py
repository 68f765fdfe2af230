"""A one-lane run's wait for its model's lease (app/one_lane_runs.py) ends
on the run's cancel: ``Stopping.watching`` (workflows/run_stop.py) sets the
run's stop event once a cancel request appears, and ``OneLane.step`` passes
that event to the datastore's lock. Here with two filesystem datastores on
one folder, one holding the lease; the SeaweedFS version, through the CLI:
tests/e2e/test_one_lane_cancel_shared.py."""

from __future__ import annotations

import contextlib
import json
import threading
from types import SimpleNamespace

import pytest

from swamp.app.one_lane_runs import OneLane
from swamp.datastore.filesystem import FilesystemDatastore
from swamp.workflows import records, run_stop
from tests.unit.sync.test_lease_cancel import JOIN_S, NotingEvent

LEASE = "model/command/shell/m1"


class _Store:
    """What ``Stopping`` reads of the datastore: whether the cancel marker exists, and who wrote it."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def exists(self, path: str) -> bool:
        return path in self.files

    def read_bytes(self, path: str) -> bytes:
        return self.files[path]


def _state(stop: threading.Event | None = None):
    run = SimpleNamespace(workflowId="w1", id="r1", cancelledBy=None, steps=lambda: [])
    lines: list[str] = []
    return SimpleNamespace(run=run, ds=_Store(), host=SimpleNamespace(watch=lambda: None), lock=threading.RLock(),
                           stop=stop or threading.Event(), cancel_requested=False, log=lines.append, lines=lines)


@pytest.fixture(autouse=True)
def _look_often(monkeypatch):
    monkeypatch.setattr(run_stop, "CANCEL_CHECK_INTERVAL", 0.04)  # a look every 10 ms, a second apart by default


def test_watching_sets_the_runs_stop_when_a_cancel_request_appears():
    state = _state()
    stopping = run_stop.Stopping(state)
    with stopping.watching() as stopped:
        assert not stopped.is_set()
        state.ds.files[records.cancel_path("w1", "r1")] = json.dumps({"by": "user:bob@peer"}).encode()
        assert stopped.wait(JOIN_S), "the cancel request was never seen"
    assert state.cancel_requested and state.run.cancelledBy == "user:bob@peer"


def test_watching_without_a_cancel_leaves_the_run_going():
    state = _state()
    with run_stop.Stopping(state).watching() as stopped:
        pass
    assert not stopped.is_set() and not state.cancel_requested


def test_a_cancel_ends_a_one_lane_steps_wait_for_a_lease_another_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("SWAMP_LOCK_TIMEOUT_MS", "120000")  # far longer than the test may take
    holder, waiter = FilesystemDatastore(tmp_path), FilesystemDatastore(tmp_path)
    state = _state(NotingEvent())
    stopping = run_stop.Stopping(state)
    lane = OneLane(waiter)
    opened: list[str] = []

    @contextlib.contextmanager
    def session():
        opened.append("session")  # the step's pull and method: never reached
        yield

    out: dict = {}

    def step() -> None:
        lane.begin(state.run)
        try:
            with stopping.watching() as stopped, lane.step(LEASE, session, cancelled=stopped):
                out["ran"] = True
        except Exception as e:  # noqa: BLE001 - handed to the test
            out["error"] = e
        finally:
            lane.end()

    with holder.lock(LEASE) as held:
        thread = threading.Thread(target=step, daemon=True)
        thread.start()
        assert state.stop.pausing.wait(JOIN_S), "the step never waited for the lease"
        state.ds.files[records.cancel_path("w1", "r1")] = b"{}"  # `workflow cancel`, from any peer
        thread.join(JOIN_S)
        assert not thread.is_alive(), "the step's wait for the lease did not end on the run's cancel"
        assert "ran" not in out and opened == [], out
        assert getattr(out["error"], "code", None) == "cancelled", out
        assert not waiter.held.holds(LEASE) and not held.lost  # the other's lease untouched
        assert holder.held.holds(LEASE)
