"""Several peers doing random writes, deletes, version publishes, pulls and
pushes on one store, with SYNC.md's invariants checked after every step and
convergence checked at the end of every run.

Every write puts bytes nobody wrote before, so contents identify writes:
- no lost update (S1): at the end, every content ever written is in the
  converged tree, in a conflict copy, or was replaced by a peer that had it
  on disk when it wrote over it;
- no resurrection (S4): along the log, a path never gets back a content that
  a later commit had replaced;
- monotonic head, contiguous log, verified blobs; immutable version paths are
  committed once (S3);
- convergence: after everyone syncs, all caches equal the log's tree.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.objectstore.memory import MemoryObjectStore
from swamp.datastore.sync import SyncConflictError, SyncEngine
from swamp.datastore.sync.commitlog import fetch_one, list_seqs
from swamp.datastore.sync.localonly import is_conflict_copy, is_synced
from swamp.util.atomic import atomic_write
from swamp.repo.datastores import path_rules

CI = os.environ.get("CI") == "true"
PEERS = ("p0", "p1", "p2")
PLAIN = ("files/a", "files/b", "files/dir/c", "definitions-evaluated/m.yaml")
DOC = "config/shared.json"
VERSIONS = "data/acme-c/m1/count"


class SyncMachine(RuleBasedStateMachine):
    use_local_dir = False

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="swamp-sync-prop-"))
        self.store = LocalDirObjectStore(self.dir / "objects") if self.use_local_dir else MemoryObjectStore()
        self.peers = {p: SyncEngine(self.store, self.dir / p, rules=path_rules(), peer=p, concurrency=2, checkpoint_every=7)
                      for p in PEERS}
        self.counter = 0
        self.written: set[bytes] = set()  # every content any peer wrote
        self.replaced: set[bytes] = set()  # contents a peer had on disk when it wrote or deleted over them
        self.doc_keys: set[str] = set()
        self.heads = dict.fromkeys(PEERS, 0)

    # -------------------------------------------------------------- helpers
    def _fresh(self, peer: str) -> bytes:
        self.counter += 1
        data = f"{peer}#{self.counter}".encode()
        self.written.add(data)
        return data

    def _before_change(self, e: SyncEngine, rel: str) -> None:
        e.mark_dirty(rel)
        p = e.root / rel
        if p.is_file():
            self.replaced.add(p.read_bytes())

    def _run(self, fn) -> None:
        try:
            fn()
        except SyncConflictError:
            pass  # reported conflicts are allowed; the invariants say nothing was lost

    # ---------------------------------------------------------------- rules
    @rule(peer=st.sampled_from(PEERS), rel=st.sampled_from(PLAIN))
    def write(self, peer: str, rel: str) -> None:
        e = self.peers[peer]
        self._before_change(e, rel)
        atomic_write(e.root / rel, self._fresh(peer))

    @rule(peer=st.sampled_from(PEERS), rel=st.sampled_from(PLAIN))
    def delete(self, peer: str, rel: str) -> None:
        e = self.peers[peer]
        if (e.root / rel).is_file():
            self._before_change(e, rel)
            (e.root / rel).unlink()

    @rule(peer=st.sampled_from(PEERS))
    def add_doc_key(self, peer: str) -> None:
        e = self.peers[peer]
        path = e.root / DOC
        doc = json.loads(path.read_bytes()) if path.exists() else {}
        self.counter += 1
        key = f"{peer}-{self.counter}"
        doc[key] = self.counter
        self.doc_keys.add(key)
        e.mark_dirty(DOC)
        atomic_write(path, json.dumps(doc))

    @rule(peer=st.sampled_from(PEERS))
    def publish_version(self, peer: str) -> None:
        """Without the lease, on purpose: racing publishers must be refused."""
        e = self.peers[peer]
        d = e.root / VERSIONS
        latest = max((int(p.name) for p in d.iterdir() if p.name.isdigit()), default=0) if d.exists() else 0
        rel = f"{VERSIONS}/{latest + 1}/raw"
        e.mark_dirty(rel)
        atomic_write(e.root / rel, self._fresh(peer))

    @rule(peer=st.sampled_from(PEERS))
    def pull(self, peer: str) -> None:
        self._run(self.peers[peer].pull)

    @rule(peer=st.sampled_from(PEERS))
    def push(self, peer: str) -> None:
        self._run(self.peers[peer].push)

    @rule(peer=st.sampled_from(PEERS))
    def sync(self, peer: str) -> None:
        self._run(self.peers[peer].sync)

    @precondition(lambda self: self.counter > 0)
    @rule(peer=st.sampled_from(PEERS))
    def push_full_walk(self, peer: str) -> None:
        self._run(lambda: self.peers[peer].push(full_walk=True))

    # ----------------------------------------------------------- invariants
    @invariant()
    def heads_never_go_down(self) -> None:
        for p, e in self.peers.items():
            head = e.state.head
            assert head >= self.heads[p], f"{p}'s head went from {self.heads[p]} to {head}"
            self.heads[p] = head

    @invariant()
    def log_never_resurrects_or_rewrites(self) -> None:
        history: dict[str, list[bytes | None]] = {}
        for seq in list_seqs(self.store, self.peers["p0"].layout, 0):
            for ch in fetch_one(self.store, self.peers["p0"].layout, seq).changes:
                content = (None if ch.op != "put" else ch.inline if ch.inline is not None
                           else self._content(ch.sha256))
                past = history.setdefault(ch.path, [])
                if content is not None and ch.path != DOC:
                    assert content not in past, f"{ch.path} got back {content!r} in commit {seq}"
                if ch.path.startswith(VERSIONS):
                    assert not past, f"immutable {ch.path} committed twice (commit {seq})"
                past.append(content)

    def _content(self, sha: str) -> bytes:
        return self.store.get(self.peers["p0"].layout.blob(sha))[0]

    def teardown(self) -> None:
        try:
            for e in self.peers.values():
                self._run(e.sync)  # unpushed work may still conflict, once
            for e in self.peers.values():
                e.sync()  # ...but then everything is resolved: no conflict any more
            trees = {p: {r: (e.root / r).read_bytes() for r in e.tree.walk() if is_synced(r)}
                     for p, e in self.peers.items()}
            assert trees["p0"] == trees["p1"] == trees["p2"], "peers did not converge"
            assert self.peers["p0"].verify()["ok"]
            kept = set(trees["p0"].values())
            for e in self.peers.values():
                kept |= {(e.root / r).read_bytes() for r in e.tree.walk() if is_conflict_copy(r)}
            lost = self.written - kept - self.replaced
            assert not lost, f"written, never replaced by anyone who saw it, and gone: {sorted(lost)}"
            if self.doc_keys:
                docs = [json.loads(trees["p0"][DOC])]
                for e in self.peers.values():
                    docs += [json.loads((e.root / r).read_bytes()) for r in e.tree.walk()
                             if r.startswith(DOC + ".conflict-")]
                assert self.doc_keys <= set().union(*docs), "a key added to the shared document was lost"
        finally:
            for e in self.peers.values():
                e.close()
            shutil.rmtree(self.dir, ignore_errors=True)


class LocalDirSyncMachine(SyncMachine):
    use_local_dir = True


TestSyncMemory = SyncMachine.TestCase
TestSyncMemory.settings = settings(max_examples=200 if CI else 40, stateful_step_count=40 if CI else 25,
                                   deadline=None)
TestSyncLocalDir = LocalDirSyncMachine.TestCase
TestSyncLocalDir.settings = settings(max_examples=50 if CI else 10, stateful_step_count=30 if CI else 20,
                                     deadline=None)
