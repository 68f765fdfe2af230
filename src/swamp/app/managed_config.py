"""Managed config: definitions, workflows, vault configurations and the
extension lockfile kept in the shared datastore (its config tier) instead
of the repository, so every peer and serve replica reads one copy without
a git round-trip (``managedConfig: true`` in ``.swamp.yaml``).

The config tier is the datastore's own tree under the same relative paths
as in a repository: ``models/<type>/<name>.yaml``,
``workflows/workflow-<name>.yaml``, ``vaults/<type>/<name>.yaml`` and
``extensions/lockfile.json``. ``Repo.config_root()`` is the one resolver.

Each document is its own file, so a change writes only that file: a peer's
documents are never rewritten from a stale copy. Every change to one runs
as the shared lockfile's changes do: one ``changing`` session under the
document's lease (``config/<kind>/<name>``), which pulls first (so the
change starts from what peers published), writes through the datastore
(journaled), and publishes one commit; a failed publish is
UnpublishedError, published by the next sync or state-changing command.
A document changed on two peers is a conflict the sync names (both copies
kept), never a silent last-writer-wins.

Reading pulls first: the entry points set ``Repo.on_config_read`` to
``refresh``, which pulls once per context (a CLI command, a serve request)
before the config tier is first read.

An edit never publishes over a version it did not start from. ``model|
workflow|vault edit`` edits a private copy (``edit_privately``), outside the
synced tree, so a pull by another command meanwhile cannot slip a peer's
version under the open editor; the copy goes back only if the document is
still what the edit started from, else it is kept as a conflict copy.
A document changed in place (by hand, then ``datastore config publish``) is
checked against its base (repo/config_bases.py): the version this checkout first
pulled, last published, or last had put back. An edit that touches lines
peers changed since that base may have been made on an older version (an
editor's buffer saved over a pulled file), so it is kept as a conflict copy
and the peer's version is put back."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from swamp.app.lifecycle import changing, is_shared, reading
from swamp.app.lifecycle import refresh as _pull
from swamp.datastore.sync.counts import SyncCounts
from swamp.datastore.sync.localonly import conflict_copy_name
from swamp.errors import ConflictError, NotFoundError, SwampError, UnpublishedError, UsageError
from swamp.extensions import lockfile
from swamp.repo import config_bases
from swamp.repo.context import config_lease, new_config_scope
from swamp.util.atomic import atomic_write

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: what the config tier holds, as (kind, directory)
KINDS = (("model", "models"), ("workflow", "workflows"), ("vault", "vaults"))


# ------------------------------------------------------------- freshness
def refresh(repo: Repo) -> None:
    """The hook the entry points set as ``repo.on_config_read``: pull before
    the config tier is first read (nothing offline or when not managed)."""
    if repo.managed_config and not repo.offline:
        _pull(repo)


def new_request() -> None:
    """A serve request starts: its first read of the config tier pulls
    (the context it runs in may be a copy of one that already did)."""
    new_config_scope()


def attach(repo: Repo):
    """Make ``repo``'s config reads pull first; returns it."""
    repo.on_config_read = refresh
    return repo


# ------------------------------------------------------------- changes
@contextlib.contextmanager
def _changing_document(repo: Repo, command: str, kind: str, name: str, counts: SyncCounts) -> Iterator[None]:
    """Around a domain function that writes one document: under managed
    config, one changing session under the document's lease; otherwise the
    repository's file is written as it always was (git is the sharing)."""
    if not repo.managed_config:
        yield
        return
    repo.config_root()  # pulled once before the lease (the hook), so names resolve as peers left them
    with changing(repo, command, leases=[config_lease(kind, name)], into=counts):
        yield


def _with_sync(repo: Repo, value: dict, counts: SyncCounts) -> dict:
    return {**value, "sync": counts.to_json()} if repo.managed_config else value


def _run(repo: Repo, command: str, kind: str, name: str, body) -> dict:
    counts = SyncCounts()
    done: dict = {}
    try:
        with _changing_document(repo, command, kind, name, counts):
            done.update(body())
    except UnpublishedError as e:
        raise e.with_value(_with_sync(repo, done, counts))
    if repo.managed_config and isinstance(done.get("path"), str):
        path = repo.root / done["path"]
        rel = repo.config_rel(path)
        if rel is not None and path.is_file():
            config_bases.remember(repo, rel, path.read_bytes())  # what this checkout published of it
    return _with_sync(repo, done, counts)


def create_model(repo: Repo, type_name: str, name: str, global_args: dict[str, str],
                 inputs: dict | None = None) -> dict:
    """``swamp model create``: in the config tier under managed config."""
    from swamp.app.model_definitions import create_model as create

    return _run(repo, f"model create {name}", "model", name,
                lambda: create(repo, type_name, name, global_args, inputs=inputs))


def create_workflow(repo: Repo, name: str) -> dict:
    """``swamp workflow create``: in the config tier under managed config."""
    from swamp.app.workflow_files import create

    return _run(repo, f"workflow create {name}", "workflow", name, lambda: create(repo, name))


def create_vault(repo: Repo, vault_type: str, name: str, settings: dict | None = None) -> dict:
    """``swamp vault create``: its configuration in the config tier under
    managed config (where its secrets live does not change)."""
    from swamp.app.vaults import create

    return _run(repo, f"vault create {name}", "vault", name, lambda: create(repo, vault_type, name, settings))


def publish_edit(repo: Repo, kind: str, name: str, path: Path) -> dict:
    """After ``swamp model|workflow edit`` changed ``path`` in an editor:
    under managed config, publish it in one session under the document's
    lease. Its pull brings what peers published meanwhile; a peer's change
    to this same document is a conflict that keeps both copies. An edit
    made in place (not through ``edit_privately``) whose document a peer
    changed since this checkout last published it is not published: it is
    kept as a conflict copy, the peer's version is put back, and
    ConflictError says where the edit is."""
    if not repo.managed_config:
        return {}
    rel = repo.config_rel(path)
    checked = _CHECKED.pop(str(path.absolute()), None)
    counts = SyncCounts()
    published = None
    try:
        with changing(repo, f"{kind} edit {name}", leases=[config_lease(kind, name)], into=counts):
            if rel is not None and path.is_file():
                data = path.read_bytes()
                if _sha(data) != checked:  # an edit in place: from which version?
                    _refuse_stale(repo, [(rel, data)])
                published = data
            _journal(repo, path)
    except UnpublishedError as e:
        raise e.with_value({"name": name, "path": rel, "sync": counts.to_json()})
    if rel is not None:
        config_bases.remember(repo, rel, published)
    return {"name": name, "path": rel, "sync": counts.to_json()}


# ------------------------------------------------------------- stale edits
#: paths whose content ``edit_privately`` put back after checking it (abs
#: path -> sha256): ``publish_edit`` needs no other check for them
_CHECKED: dict[str, str] = {}


def edit_privately(repo: Repo, path: Path, edit) -> None:
    """``swamp KIND edit`` under managed config: ``edit(copy)`` edits a
    private copy of ``path`` (a temporary file outside the synced tree,
    named like it), so nothing a pull writes meanwhile lands under the
    editor. The copy goes back to ``path`` only if ``path`` still holds
    what the edit started from; otherwise the document changed meanwhile
    (a peer's version pulled by another command), and the edit is kept
    beside it as a conflict copy (ConflictError, exit 1): nothing is
    published over a version the editor never showed."""
    import shutil
    import tempfile

    start = path.read_bytes()
    scratch = Path(tempfile.mkdtemp(prefix="swamp-edit-"))
    keep_scratch = False
    try:
        copy = scratch / path.name
        copy.write_bytes(start)
        try:
            edit(copy)
        except Exception as e:
            if copy.is_file() and copy.read_bytes() != start:  # never lose what was typed
                keep_scratch = True
                raise SwampError(f"the editor failed ({e}); the edit was not saved", code="editor_failed",
                                 hint=f"what the editor wrote is in {copy}") from e
            raise
        edited = copy.read_bytes()
        try:
            now = path.read_bytes()
        except FileNotFoundError:
            now = None
        if now is not None and _sha(now) == _sha(start):
            if edited != start:
                from swamp.util.atomic import atomic_write

                atomic_write(path, edited)  # journaled by publish_edit, once it validates
            _CHECKED[str(path.absolute())] = _sha(edited)
            return
        if edited == start:
            return  # nothing edited: nothing to keep
        rel = repo.config_rel(path)
        if rel is None:
            keep_scratch = True
            raise ConflictError(f"{path} changed while it was being edited; the edit was not saved",
                                hint=f"edit it again; your version is in {copy}")
        saved = _keep_aside(repo, rel, edited)
        raise ConflictError(
            f"{rel} changed while it was being edited (a peer's version arrived); your edit was not published: "
            f"it is kept as {saved}",
            hint=f"compare it with the document ('swamp datastore conflicts'), edit again, or publish yours over "
                 f"it with 'swamp datastore conflicts restore {saved}'")
    finally:
        if not keep_scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _committed(repo: Repo, rel: str) -> str | None:
    """The sha256 of the version of ``rel`` last committed, as this checkout
    knows it after its pull (None on a directory datastore, or never
    committed)."""
    engine = getattr(repo.datastore, "engine", None)
    if engine is None:
        return None
    base = engine.state.base(rel)
    return base.sha256 if base is not None else None


def _keep_aside(repo: Repo, rel: str, data: bytes) -> str:
    """Write ``data`` beside ``rel`` under the name the sync engine gives
    conflict copies (local-only, listed by ``swamp datastore conflicts``);
    returns that name."""
    engine = getattr(repo.datastore, "engine", None)
    peer, seq, commit = ("local", 0, "") if engine is None else (
        engine.peer, engine.state.head, engine.state.tip()[0] or "")
    root = repo.datastore.root
    saved = conflict_copy_name(rel, peer, seq, commit)
    while (root / saved).exists():
        saved = conflict_copy_name(rel, peer, seq, "")
    atomic_write(root / saved, data)
    return saved


def _put_back_committed(repo: Repo, rel: str) -> None:
    """``rel`` back to its committed content (fetched again: the file was
    overwritten in place); if the bucket cannot be reached it is left "not
    fetched", and the next read or pull fetches it."""
    engine = repo.datastore.engine
    with engine.exclusive():
        base = engine.state.base(rel)
        with engine.state.transaction():
            engine.state.set_base(rel, base.sha256, base.size, hydrated=False, src=base.src)
        (repo.datastore.root / rel).unlink(missing_ok=True)
        with contextlib.suppress(SwampError):
            engine.hydrate(rel)


def _refuse_stale(repo: Repo, edits: list[tuple[str, bytes]]) -> None:
    """Inside the publishing session, after its pull: each in-place edit
    ``(rel, bytes)`` that may have been made on an older version than the
    committed one (config_bases.edit_is_stale) is kept aside as a conflict
    copy, the committed version put back, and ConflictError raised naming
    them. (A document new to this checkout has no base: nothing older to
    have edited.)"""
    kept = []
    for rel, data in edits:
        cur = _committed(repo, rel)
        if not config_bases.edit_is_stale(repo, rel, data, cur):
            continue
        saved = _keep_aside(repo, rel, data)
        _put_back_committed(repo, rel)
        try:  # the next edit in place starts from the version now on disk
            back = (repo.datastore.root / rel).read_bytes()
        except OSError:
            back = None
        config_bases.remember(repo, rel, back if back is not None and _sha(back) == cur else None, cur)
        kept.append((rel, saved))
    if kept:
        raise ConflictError(
            "changed by a peer since this checkout's copy was pulled or last published, and the edit changes what "
            "the peer changed (or undoes it): it may have been made on an older version (an editor's buffer "
            "saved over a pulled file); not published: " + ", ".join(f"{rel} (your edit kept as {saved})" for rel, saved in kept),
            hint="compare with 'swamp datastore conflicts'; if your edit was made on the current version, publish "
                 "it with 'swamp datastore conflicts restore COPY'; 'swamp model|workflow|vault edit' always knows "
                 "which version it started from")


def _journal(repo: Repo, path: Path) -> None:
    """Make the datastore publish ``path`` as it is now on disk (written by
    an editor or a domain function that wrote the file directly)."""
    if repo.config_rel(path) is None:
        return
    if path.is_file():
        repo.write_config(path, path.read_bytes())
    else:
        repo.remove_config(path)


def publish(repo: Repo) -> dict:
    """Publish documents of the config tier that were changed by hand (an
    editor on ``.swamp/models/...`` rather than ``swamp model edit``): one
    session under every document's lease; its pull first, so a document a
    peer changed meanwhile is a named conflict (both copies kept), never
    overwritten. Unchanged documents cost nothing."""
    if not repo.managed_config:
        raise UsageError("config is not managed in this repository: its definitions and workflows are files "
                         "of the repository, shared through git",
                         hint="see 'swamp datastore config status'")
    root = repo.datastore.root
    docs = _repo_documents(root)
    counts = SyncCounts()
    changed: list[tuple[str, bytes]] = []
    try:
        with changing(repo, "datastore config publish",
                      leases=sorted({config_lease(kind, name) for kind, name, _ in docs}), into=counts):
            for _, _, rel in docs:
                if (root / rel).is_file():
                    data = (root / rel).read_bytes()
                    if _sha(data) != _committed(repo, rel):
                        changed.append((rel, data))
            try:
                _refuse_stale(repo, changed)  # kept aside; the others are still published below
            finally:
                for rel, data in changed:
                    if (root / rel).is_file() and (root / rel).read_bytes() == data:
                        repo.datastore.write_bytes(rel, data)  # journaled: the push diffs it
                        config_bases.remember(repo, rel, data)
    except UnpublishedError as e:
        raise e.with_value({"documents": len(docs), "sync": counts.to_json()})
    return {"documents": len(docs), "published": counts.filesPushed, "sync": counts.to_json()}


# ------------------------------------------------------------- migrate
def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _repo_documents(root: Path) -> list[tuple[str, str, str]]:
    """The repository's config documents as (kind, name, relative path),
    found as their readers find them."""
    out = []
    models = root / "models"
    if models.is_dir():
        out += [("model", p.stem, p.relative_to(root).as_posix())
                for p in models.rglob("*.yaml") if not p.name.startswith(".") and p.is_file()]
    workflows = root / "workflows"
    if workflows.is_dir():
        out += [("workflow", p.stem[len("workflow-"):], p.relative_to(root).as_posix())
                for p in workflows.glob("workflow-*.yaml") if p.is_file()]
    vaults = root / "vaults"
    if vaults.is_dir():
        out += [("vault", p.stem, p.relative_to(root).as_posix())
                for p in vaults.glob("*/*.yaml") if p.is_file()]
    return sorted(out, key=lambda d: d[2])


def _check_migratable(repo: Repo) -> None:
    if not is_shared(repo):
        raise UsageError("this repository's datastore is a directory on this machine: there is nobody to share "
                         "its config with",
                         hint="managed config is for a shared datastore: set one up first "
                              "('swamp datastore setup s3 --bucket ...'), then run 'swamp datastore config migrate'")
    if repo.managed_config:
        raise SwampError("this repository's config is already managed: definitions, workflows and vault "
                         "configurations are read from the datastore", code="already_managed",
                         hint="see 'swamp datastore config status'")
    if repo.offline:
        raise UsageError("datastore config migrate publishes to the shared datastore, which --offline cannot do",
                         hint="run it without --offline")


def _plan(repo: Repo, docs: list[tuple[str, str, str]]) -> dict:
    """What a migration does, from this checkout's copy of the datastore as
    of its last pull: per document, copy it, or it is already there (same
    bytes), or the datastore holds another version of it (a peer's)."""
    ds = repo.datastore
    plan: dict = {"copy": [], "same": [], "differs": [], "lockfile": "none", "lockfileConflicts": []}
    for _kind, _name, rel in docs:
        ours = (repo.root / rel).read_bytes()
        theirs = ds.local_path(rel)
        if not theirs.is_file():
            plan["copy"].append(rel)
        elif _sha(theirs.read_bytes()) == _sha(ours):
            plan["same"].append(rel)
        else:
            plan["differs"].append(rel)
    repo_lock = repo.root / lockfile.PATH
    if repo_lock.is_file():
        ours = lockfile.parse(repo_lock.read_bytes(), lockfile.PATH)
        try:
            theirs = lockfile.parse(ds.read_bytes(lockfile.PATH), f"datastore:{lockfile.PATH}")
        except NotFoundError:
            plan["lockfile"] = "copy"
        else:
            missing = {n: e for n, e in ours.extensions.items() if n not in theirs.extensions}
            plan["lockfileConflicts"] = sorted(n for n, e in ours.extensions.items()
                                               if n in theirs.extensions and theirs.extensions[n] != e)
            untrusted = set(ours.trustedIndexes) - set(theirs.trustedIndexes)
            plan["lockfile"] = "merge" if missing or untrusted else "same"
    return plan


def _refuse_differences(plan: dict) -> None:
    if plan["differs"] or plan["lockfileConflicts"]:
        what = plan["differs"] + [f"{p} (extension {n})" for p, n in
                                  (("extensions/lockfile.json", n) for n in plan["lockfileConflicts"])]
        raise ConflictError("the datastore already holds other versions of: " + ", ".join(what)
                            + "; nothing was migrated",
                            hint="a peer migrated (or changed) them first: keep the datastore's versions with "
                                 "'swamp datastore config migrate --keep-datastore', or make this repository's "
                                 "copies match them (see 'swamp datastore config status') and run it again")


def migrate(repo: Repo, *, dry_run: bool = False, remove_repo_files: bool = False,
            keep_datastore: bool = False) -> dict:
    """Copy the repository's definitions, workflows, vault configurations
    and lockfile into the config tier in ONE changing session (under every
    copied document's lease and the lockfile's), verify the copies, publish,
    and only then set ``managedConfig: true``. A failed publish raises
    UnpublishedError and leaves the setting off; running it again publishes
    what is left and completes it. A document the datastore already holds
    in another version (a peer's) stops it before anything is written,
    unless ``keep_datastore``: then the datastore's version stays and the
    repository's is not copied."""
    _check_migratable(repo)
    docs = _repo_documents(repo.root)
    counts = SyncCounts()
    if dry_run:
        with reading(repo, into=counts):
            plan = _plan(repo, docs)
        return {"dryRun": True, "managed": False, "copy": plan["copy"], "alreadyThere": plan["same"],
                "differs": plan["differs"], "lockfile": plan["lockfile"],
                "lockfileConflicts": plan["lockfileConflicts"], "sync": counts.to_json()}
    leases = sorted({config_lease(kind, name) for kind, name, _ in docs} | {lockfile.LEASE})
    value: dict = {}
    ds = repo.datastore
    try:
        with changing(repo, "datastore config migrate", leases=leases, into=counts):
            plan = _plan(repo, docs)
            if not keep_datastore:
                _refuse_differences(plan)
            for rel in plan["copy"]:
                ds.write_bytes(rel, (repo.root / rel).read_bytes())
            if plan["lockfile"] in ("copy", "merge"):
                with ds.editing(lockfile.PATH):
                    _migrate_lockfile(repo)
            _verify(repo, plan["copy"] + plan["same"], skip_pins=plan["lockfileConflicts"])
            value.update({"managed": True, "copied": plan["copy"], "alreadyThere": plan["same"],
                          "keptDatastore": plan["differs"] + [f"{lockfile.PATH} (extension {n})"
                                                              for n in plan["lockfileConflicts"]],
                          "lockfile": {"copy": "copied", "merge": "merged", "same": "already there",
                                       "none": "none in the repository"}[plan["lockfile"]]})
    except UnpublishedError as e:
        raise e.with_value({**value, "managed": False, "sync": counts.to_json()})
    # Published: only now does this repository read the config tier.
    config = repo.config_model()
    config.managedConfig = True
    repo.save_config(config)
    removed = _remove_repo_files(repo, docs) if remove_repo_files else []
    return {**value, "removed": removed,
            "repositoryFiles": "removed" if remove_repo_files else
            "left in place, no longer read (remove them with --remove-repo-files, or from git)",
            "sync": counts.to_json()}


def _migrate_lockfile(repo: Repo) -> None:
    """Inside the session, under the lockfile's lease and edit hold: add the
    repository's pins and trusted indexes the datastore's lockfile lacks."""
    ours = lockfile.parse((repo.root / lockfile.PATH).read_bytes(), lockfile.PATH)
    try:
        theirs = lockfile.parse(repo.datastore.read_bytes(lockfile.PATH), f"datastore:{lockfile.PATH}")
    except NotFoundError:
        theirs = lockfile.Lockfile()
    for n, e in ours.extensions.items():
        theirs.extensions.setdefault(n, e)
    for url, trusted in ours.trustedIndexes.items():
        theirs.trustedIndexes.setdefault(url, trusted)
    repo.datastore.write_bytes(lockfile.PATH, lockfile.dumps(theirs))


def _verify(repo: Repo, rels: list[str], *, skip_pins: list[str]) -> None:
    """Every copied document reads back from the config tier with the
    repository's bytes, and every pin of the repository's lockfile (but
    ``skip_pins``, where the datastore's was kept) is in the datastore's."""
    bad = [rel for rel in rels if _sha(repo.datastore.read_bytes(rel)) != _sha((repo.root / rel).read_bytes())]
    repo_lock = repo.root / lockfile.PATH
    if repo_lock.is_file():
        ours = lockfile.parse(repo_lock.read_bytes(), lockfile.PATH)
        theirs = lockfile.parse(repo.datastore.read_bytes(lockfile.PATH), f"datastore:{lockfile.PATH}")
        bad += [f"{lockfile.PATH} (extension {n})" for n, e in sorted(ours.extensions.items())
                if n not in skip_pins and theirs.extensions.get(n) != e]
    if bad:
        raise SwampError("the config tier does not hold what was copied: " + ", ".join(bad),
                         code="verify_failed", hint="run 'swamp datastore config migrate' again")


def _remove_repo_files(repo: Repo, docs: list[tuple[str, str, str]]) -> list[str]:
    removed = []
    for _, _, rel in docs:
        (repo.root / rel).unlink(missing_ok=True)
        removed.append(rel)
    if (repo.root / lockfile.PATH).is_file():
        (repo.root / lockfile.PATH).unlink()
        removed.append(lockfile.PATH)
    for top in ("models", "workflows", "vaults", "extensions"):
        _prune_empty(repo.root / top)
    return sorted(removed)


def _prune_empty(directory: Path) -> None:
    if not directory.is_dir():
        return
    for d in sorted((p for p in directory.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            d.rmdir()
    with contextlib.suppress(OSError):
        directory.rmdir()


# ------------------------------------------------------------- status
def _count(root: Path) -> dict:
    docs = _repo_documents(root)

    return {"models": sum(1 for d in docs if d[0] == "model"),
            "workflows": sum(1 for d in docs if d[0] == "workflow"),
            "vaults": sum(1 for d in docs if d[0] == "vault"),
            "lockfile": (root / lockfile.PATH).is_file()}


def status(repo: Repo) -> dict:
    """What is managed, and where each kind of document is read from."""
    shared = is_shared(repo)
    counts = SyncCounts()
    managed = repo.managed_config
    if shared:
        with reading(repo, into=counts):
            tier = _count(repo.datastore.root)
    else:
        tier = None
    in_repo = _count(repo.root)
    differs = []
    if shared:
        root = repo.datastore.root
        differs = [rel for _, _, rel in _repo_documents(repo.root) if (root / rel).is_file()
                   and _sha((root / rel).read_bytes()) != _sha((repo.root / rel).read_bytes())]
    notes = []
    if managed and any(v for v in in_repo.values()):
        notes.append("the repository still has config files; they are no longer read")
    if not managed and shared and tier and any(v for k, v in tier.items() if k != "lockfile"):
        notes.append("the datastore's config tier holds documents (a peer migrated): "
                     "'swamp datastore config migrate' makes this checkout read them")
    if managed and not shared:
        notes.append("managedConfig is set but the datastore is not shared: the config is read from "
                     f"{repo.datastore.root}")
    where = "datastore" if managed else "repository"
    return {"managed": managed, "shared": shared, "readsFrom": where,
            "configRoot": str(repo.datastore.root if managed else repo.root),
            "datastore": tier, "repository": in_repo, "differs": differs, "notes": notes,
            **({"sync": counts.to_json()} if shared else {})}
