"""Issue 24's rules in the property tests: gc runners whose clocks are off
by up to what S3 accepts (15 minutes), one of them running while another
gc sweeps a blob that a push reuses (N2, N3); and editors' stale buffers
under managed config (N4).

``SkewedGcMachine`` is the sync machine of test_sync_stateful.py (its
peers, rules, invariants and its final check: every content written is
kept or was replaced by someone who saw it, every peer converges, verify
finds every blob) plus those gc rules. ``StaleBufferMachine`` is peers on
one store with managed config, opening editors on a definition, pulling,
saving buffers and editing in place; its checker: no publish that
succeeded ever lacked a line another publish had published (each edit
only adds lines of its own), so nothing acknowledged is ever overwritten
from a stale copy."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import gc as gcmod
from swamp.datastore.sync.clocks import STORE_MAX_SKEW_S
from swamp.errors import ConflictError, SwampError
from swamp.util.atomic import atomic_write
from swamp.util.digest import sha256_hex
from tests.property.test_sync_stateful import MIN_RETENTION_DAYS, PEERS, SyncMachine

CI = os.environ.get("CI") == "true"
#: skews up to the largest S3 accepts, both ways
SKEWS_MIN = [-STORE_MAX_SKEW_S / 60, -12, -1, 1, 12, STORE_MAX_SKEW_S / 60]


class SkewedGcMachine(SyncMachine):
    @rule(peer=st.sampled_from(PEERS), minutes=st.sampled_from(SKEWS_MIN))
    def skewed_gc(self, peer: str, minutes: float) -> None:
        """gc by a runner whose clock is up to 15 minutes off the store's."""
        self.skews[peer] = minutes * 60
        self._run(peer, lambda: self.peers[peer].gc(retention_days=MIN_RETENTION_DAYS))

    @rule(other=st.sampled_from(PEERS), minutes=st.sampled_from(SKEWS_MIN), reuse=st.booleans())
    def skewed_gc_during_a_sweep(self, other: str, minutes: float, reuse: bool) -> None:
        """The N2 interleaving: a blob left by a killed push is marked, a day
        passes, gc G1 (p0) publishes its sweep and is slow to delete it.
        Meanwhile ``other`` runs gc with its clock ``minutes`` off (it must
        not take the live sweep for a dead one), and with ``reuse`` p2 commits a file of that
        very content (its upload answers 412), and waits the sweep out while
        G1's delete lands. The final check (verify, convergence) finds any
        commit left referencing a deleted blob."""
        self.counter += 1
        data = f"orphan#{self.counter}".encode()
        g1, layout = self.peers["p0"], self.peers["p0"].layout
        key = layout.blob(sha256_hex(data))
        self.store.put(key, data)
        self._run("p0", lambda: g1.gc(retention_days=MIN_RETENTION_DAYS))  # marks it
        self.age(25 * 3600.0)
        in_sweep, go = threading.Event(), threading.Event()
        real_delete = self.store.delete
        sweeper: list[threading.Thread] = []

        def slow_delete(k, **kw):
            if k == key and not in_sweep.is_set():  # G1's delete (from one of its pool's threads)
                in_sweep.set()
                go.wait(30)
            return real_delete(k, **kw)

        errors: list[BaseException] = []

        def sweep() -> None:
            try:
                g1.gc(retention_days=MIN_RETENTION_DAYS)
            except SwampError as e:  # another sweep still live, a remote reset: the rule just does less
                errors.append(e)

        self.store.delete = slow_delete
        real_time = gcmod.time
        try:
            with self._as("p0"):
                sweeper.append(threading.Thread(target=sweep))
                sweeper[0].start()
                while not in_sweep.wait(0.01) and sweeper[0].is_alive():
                    pass
            if in_sweep.is_set():
                self.skews[other] = minutes * 60
                with self._as(other):
                    try:  # refused while G1's sweep is live; what matters is what the final check finds
                        self.peers[other].gc(retention_days=MIN_RETENTION_DAYS)
                    except SwampError as e:
                        assert e.code == "gc_contended", e
            if reuse and in_sweep.is_set():
                class _WaitOut:  # p2 waits the sweep out: G1's delete lands meanwhile
                    monotonic = staticmethod(time.monotonic)

                    @staticmethod
                    def sleep(_seconds: float) -> None:
                        go.set()
                        sweeper[0].join()

                gcmod.time = _WaitOut
                p2 = self.peers["p2"]
                rel = f"files/reused/{self.counter}"
                p2.mark_dirty(rel)
                atomic_write(p2.root / rel, data)
                self.written.add(data)
                self._run("p2", p2.push)
        finally:
            gcmod.time = real_time
            go.set()
            sweeper[0].join()
            self.store.delete = real_delete


TestSkewedGc = SkewedGcMachine.TestCase
TestSkewedGc.settings = settings(max_examples=120 if CI else 30, stateful_step_count=30 if CI else 20,
                                 deadline=None)


# ------------------------------------------------------- managed config
EDITORS = ("a", "b", "c")


def _managed(repo):
    from swamp.app.managed_config import attach
    from swamp.repo.config_bases import watch

    config = repo.config_model()
    config.managedConfig = True
    repo.save_config(config)
    watch(repo, repo.datastore)  # as repo/datastores.py does when it opens a managed repository's datastore
    return attach(repo)


def _tokens(data: bytes) -> set[str]:
    return {line.strip() for line in data.decode().splitlines() if line.strip().startswith("# tok-")}


class StaleBufferMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        from swamp.app import managed_config
        from tests.review.shared import shared_repo

        self.dir = Path(tempfile.mkdtemp(prefix="swamp-stale-buffer-"))
        store = MemoryObjectStore()
        self.repos = {p: _managed(shared_repo(self.dir / p, store, p)) for p in EDITORS}
        done = managed_config.create_model(self.repos["a"], "command/shell", "hello", {"run": "echo one"})
        self.rel = self.repos["a"].config_rel(self.repos["a"].root / done["path"])
        for repo in self.repos.values():
            repo.datastore.sync(pull=True, push=False)  # every checkout holds the definition
        self.buffers: dict[str, bytes] = {}  # an editor open on the document, per peer
        self.acknowledged: set[str] = set()  # lines some publish that succeeded carried
        self.counter = 0

    def _path(self, peer: str) -> Path:
        repo = self.repos[peer]
        if not (repo.datastore.root / self.rel).is_file():
            repo.datastore.engine.hydrate(self.rel)
        return repo.datastore.root / self.rel

    def _add_token(self, data: bytes, at: int) -> bytes:
        self.counter += 1
        lines = data.decode().splitlines(keepends=True)
        lines.insert(at % (len(lines) + 1), f"# tok-{self.counter}\n")
        return "".join(lines).encode()

    def _publish(self, peer: str, edit: bytes) -> None:
        from swamp.app import managed_config
        from swamp.repo.context import new_config_scope

        new_config_scope()  # a new command
        atomic_write(self._path(peer), edit)
        try:
            managed_config.publish(self.repos[peer])
        except (ConflictError, SwampError):
            return  # refused (a named conflict, its copy kept): nothing acknowledged
        missing = self.acknowledged - _tokens(edit)
        assert not missing, f"{peer}'s publish overwrote published lines {sorted(missing)}"
        self.acknowledged |= _tokens(edit)

    @rule(peer=st.sampled_from(EDITORS))
    def open_editor(self, peer: str) -> None:
        self.buffers[peer] = self._path(peer).read_bytes()

    @rule(peer=st.sampled_from(EDITORS), how=st.sampled_from(["refresh", "datastore sync"]))
    def a_command_pulls(self, peer: str, how: str) -> None:
        """Any command on ``peer``: its pull may replace the file under an
        open editor."""
        from swamp.app import datastore as app_datastore
        from swamp.app.managed_config import refresh

        if how == "refresh":
            refresh(self.repos[peer])
        else:
            app_datastore.sync(self.repos[peer], pull=True, push=True)

    @precondition(lambda self: self.buffers)
    @rule(data=st.data(), at=st.integers(0, 20))
    def save_editor(self, data, at: int) -> None:
        """An editor saves its buffer, plus one line of its own, and
        `datastore config publish` runs."""
        peer = data.draw(st.sampled_from(sorted(self.buffers)))
        self._publish(peer, self._add_token(self.buffers.pop(peer), at))

    @rule(peer=st.sampled_from(EDITORS), at=st.integers(0, 20))
    def edit_in_place(self, peer: str, at: int) -> None:
        """An edit of the file as it is on disk now, then publish. (This
        peer's own open editor is closed first: a checkout that publishes an
        edit while its other editor holds an older buffer is the one case a
        base cannot tell, see docs/managed-config.md.)"""
        self.buffers.pop(peer, None)
        self._publish(peer, self._add_token(self._path(peer).read_bytes(), at))

    def teardown(self) -> None:
        try:
            for repo in self.repos.values():
                repo.datastore.sync(pull=True, push=False)
            for peer in EDITORS:
                got = _tokens(self._path(peer).read_bytes())
                assert self.acknowledged <= got, f"{peer} reads a version without {sorted(self.acknowledged - got)}"
        finally:
            for repo in self.repos.values():
                repo.datastore.engine.close()
            shutil.rmtree(self.dir, ignore_errors=True)


TestStaleBuffer = StaleBufferMachine.TestCase
TestStaleBuffer.settings = settings(max_examples=150 if CI else 40, stateful_step_count=25 if CI else 20,
                                    deadline=None)


def test_a_buffer_saved_after_a_pull_brought_a_peers_line_is_refused(tmp_path) -> None:
    """The machine's basic interleaving, spelled out: b opens its editor,
    a publishes a line, b's next command pulls it, b saves: refused."""
    m = StaleBufferMachine()
    try:
        m.a_command_pulls("b", "refresh")
        m.open_editor("b")
        m.edit_in_place("a", 3)
        assert len(m.acknowledged) == 1
        m.a_command_pulls("b", "datastore sync")
        before = set(m.acknowledged)
        m._publish("b", m._add_token(m.buffers.pop("b"), 0))
        assert m.acknowledged == before  # b's stale save was not acknowledged
    finally:
        m.teardown()


def test_a_gc_12_minutes_ahead_during_a_sweep_a_push_relies_on() -> None:
    """SkewedGcMachine's N2 rule spelled out, the repro's interleaving."""
    m = SkewedGcMachine()
    try:
        m.write("p2", "files/a")
        m.push("p2")
        m.skewed_gc_during_a_sweep("p1", 12, True)
    finally:
        m.teardown()
