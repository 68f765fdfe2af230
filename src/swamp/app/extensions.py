"""Extension use cases (``swamp extension ...``).

A change to the lockfile (pull, rm, update, trust) happens in two parts:
first, outside any lease, the download, the hash checks, the install into
the repository's local state and the check that its types load; then ONE
``changing`` session under the lockfile's lease reads the current lockfile
(as of the session's pull, so a peer's entries are there), changes only
this extension's entry, writes it and publishes one commit. An entry that a
peer changed since this command looked at it is a named conflict, never
overwritten. A failed publish raises UnpublishedError with the result
attached; the next command that changes state publishes it.

An author's use cases (new, check, fmt, publish, source) are
extension_authoring.py; whether an extension's types load, extension_probe.py."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from swamp.app.extension_probe import probe
from swamp.app.lifecycle import changing, reading
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ConflictError, ExtensionError, NotFoundError, UnpublishedError, UsageError
from swamp.extensions import history, install, lockfile
from swamp.extensions.index import Index, normalize_url
from swamp.extensions.lockfile import Entry
from swamp.extensions.names import check_name, parse_spec
from swamp.extensions.workflows import ships_workflows

#: search shows at most this many matches (one request each for the latest version)
SEARCH_LIMIT = 50


# ---------------------------------------------------------------- reading
def current_lockfile(repo, counts: SyncCounts | None = None) -> lockfile.Lockfile:
    with reading(repo, into=counts):
        return lockfile.read(repo)


def _source_index(lock: lockfile.Lockfile, name: str, pinned: Entry | None, index: str | None,
                  move: bool) -> Index:
    from swamp.extensions.pinned_index import choose

    return choose(lock, name, pinned, index, move=move)


def _indexes(lock: lockfile.Lockfile, index: str | None) -> list[Index]:
    if index:
        return [Index(index)]
    if not lock.trustedIndexes:
        raise UsageError("no index given and none trusted",
                         hint="pass --index URL, or trust one: 'swamp extension trust add URL'")
    return [Index(u) for u in sorted(lock.trustedIndexes)]


def list_extensions(repo) -> dict:
    counts = SyncCounts()
    lock = current_lockfile(repo, counts)
    rows = [{"name": n, "version": e.version, "index": e.index, "types": e.types, "vaultTypes": e.vaultTypes,
             "reportTypes": e.reportTypes, "wheels": len(e.wheels),
             "installed": install.is_installed(repo, n, e)} for n, e in sorted(lock.extensions.items())]
    return {"lockfile": lockfile.location(repo), "extensions": rows, "sync": counts.to_json()}


# ---------------------------------------------------------------- changing
def _change(repo, command: str, edit, value: dict, counts: SyncCounts,
            records: list[history.Change] | None = None) -> None:
    """One session under the lockfile's lease: read, ``edit(lock)`` (returns
    whether it changed anything, and appends to ``records`` the history
    entries of what it did), write, publish: the lockfile and its history
    in one commit."""
    try:
        # The lease keeps other writers off; ``editing`` also holds this
        # checkout's pulls off between the read and the write.
        with changing(repo, command, leases=[lockfile.LEASE], into=counts), repo.datastore.editing(lockfile.PATH):
            lock = lockfile.read(repo)
            if edit(lock):
                lockfile.write(repo, lock)
            for c in records or []:
                history.record(repo.datastore, c.model_copy(update={"command": command}))
    except UnpublishedError as e:
        raise e.with_value({**value, "sync": counts.to_json()})


def approval_required(repo) -> bool:
    """Whether the team set ``extensions.requireApproval`` (read in the session)."""
    from swamp.repo import shared_config

    return history.approval_required(shared_config.read(repo.datastore))


def _check_unchanged(name: str, seen: Entry | None, now: Entry | None, wanted: Entry | None) -> None:
    def show(e):
        return e.version if e is not None else "not pinned"

    if now != seen and now != wanted:
        raise ConflictError(f"extension {name} changed since this command started: it was {show(seen)}, "
                            f"another command or peer made it {show(now)}",
                            hint=f"look at 'swamp extension list' and run the command again if you still "
                                 f"want {show(wanted)}")


def pull(repo, spec: str, *, index: str | None = None, move: bool = False) -> dict:
    name, version = parse_spec(spec)
    counts = SyncCounts()
    lock = current_lockfile(repo, counts)
    seen = lock.extensions.get(name)
    entry = _stage(repo, name, version, _source_index(lock, name, seen, index, move))
    value = {"name": name, "version": entry.version, "index": entry.index, "types": entry.types,
             "vaultTypes": entry.vaultTypes, "reportTypes": entry.reportTypes,
             "wheels": [w.filename for w in entry.wheels], "lockfile": lockfile.location(repo)}
    changed, proposed, records = [], [], []
    who = history.identity()

    def edit(lock):
        now = lock.extensions.get(name)
        _check_unchanged(name, seen, now, entry)
        _check_types_free(repo, lock, name, entry)
        records.clear()
        proposed.clear()
        if now == entry:
            changed.append(False)
            return False
        kind = history.kind_of_change(now, entry)
        summary = {"name": name, "from_": history.pin_of(name, now), "to": history.pin_of(name, entry)}
        if approval_required(repo):
            # peers keep the approved pin until a second identity approves this one
            waiting = history.pending(history.read(repo.datastore)[0]).get(name)
            if waiting is not None and waiting.entry == entry and waiting.base == now:
                proposed.append(waiting)  # proposed already, exactly this: not twice
                changed.append(False)
                return False
            records.append(history.new_change("propose", who, proposes=kind, entry=entry, base=now, **summary))
            proposed.append(records[-1])
            changed.append(False)
            return False
        records.append(history.new_change(kind, who, **summary))
        lock.extensions[name] = entry
        changed.append(True)
        return True

    _change(repo, f"extension pull {name}=={entry.version}", edit, value, counts, records)
    if changed[-1]:
        install.remove(repo, name, keep=install.target(repo, name, entry).name)  # the version it replaced
    proposal = ({"id": proposed[0].id, "by": proposed[0].by, "proposes": proposed[0].proposes}
                if proposed else None)
    return {**value, "changed": changed[-1], "proposed": proposal, "sync": counts.to_json()}


def _stage(repo, name: str, version: str | None, chosen: Index) -> Entry:
    """Download, verify and install NAME (outside any lease) and find its
    types; the entry to pin."""
    from swamp.extensions.resolve import stage

    with install.scratch(repo) as stage_dir:
        staged = stage(chosen, name, version, stage_dir)
        entry = Entry(version=staged.version, index=staged.index,
                      wheels=sorted(staged.wheels, key=lambda w: w.filename), types=[])
        target = install.install_files(repo, name, entry, staged.files)
    report = probe(target, name)
    if report["errors"]:
        raise ExtensionError(f"{name} {entry.version}: its types do not load: "
                             + "; ".join(described_failure(f) for f in report["errors"]),
                             hint="fix the extension and publish a new version, or pin another version")
    if not (report["types"] or report["vaultTypes"] or report["reportTypes"] or ships_workflows(target, name)):
        raise ExtensionError(f"{name} {entry.version} provides no model type, vault type, report type or "
                             "workflow", hint="an extension declares what it ships under the entry point groups "
                                              "'swamp.model_types', 'swamp.vault_types', 'swamp.report_types' "
                                              "or 'swamp.workflows' (a folder of workflows)")
    return entry.model_copy(update={"types": sorted(report["types"]), "vaultTypes": sorted(report["vaultTypes"]),
                                    "reportTypes": sorted(report["reportTypes"])})


def described_failure(f: dict) -> str:
    return f"{f['file']}:{f['line']}: {f['message']}" if f.get("line") else f"{f['file']}: {f['message']}"


def _check_types_free(repo, lock: lockfile.Lockfile, name: str, entry: Entry) -> None:
    from swamp.models.registry import BUILTIN_TYPES, local_type_names

    taken = {t: "builtin" for t in BUILTIN_TYPES}
    taken.update({t: f"extensions/models/{f}" for t, f in local_type_names(repo).items()})
    for other, e in lock.extensions.items():
        if other != name:
            taken.update({t: f"extension {other}" for t in e.types})
    clashes = sorted(f"{t} (already provided by {taken[t]})" for t in entry.types if t in taken)
    from swamp.vault.registry import BUILTIN as BUILTIN_VAULT_TYPES

    vault_taken = {t: "builtin" for t in BUILTIN_VAULT_TYPES}
    for other, e in lock.extensions.items():
        if other != name:
            vault_taken.update({t: f"extension {other}" for t in e.vaultTypes})
    clashes += sorted(f"vault type {t} (already provided by {vault_taken[t]})"
                      for t in entry.vaultTypes if t in vault_taken)
    if clashes:
        raise ExtensionError(f"{name} {entry.version} provides types already taken: " + ", ".join(clashes),
                             hint="one type name, one provider: remove the other one first")


def remove(repo, name: str) -> dict:
    name = check_name(name)
    counts = SyncCounts()
    removed, records = [], []
    who = history.identity()

    def edit(lock):
        entry = lock.extensions.pop(name, None)
        if entry is None:
            raise NotFoundError(f"extension {name!r} is not pinned", hint="see 'swamp extension list'")
        removed[:] = [entry.version, entry.types, entry.vaultTypes]
        records[:] = [history.new_change("remove", who, name=name, from_=history.pin_of(name, entry))]
        return True

    _change(repo, f"extension rm {name}", edit, {"name": name}, counts, records)
    install.remove(repo, name)
    return {"name": name, "version": removed[0], "lockfile": lockfile.location(repo),
            "types": removed[1], "vaultTypes": removed[2],
            "usedBy": _configs_of(repo.models_dir, removed[1]) + _configs_of(repo.vaults_dir, removed[2], "vault "),
            "sync": counts.to_json()}


def _configs_of(root, types: list[str], label: str = "") -> list[str]:
    """The config files (``<root>/<type>/<name>.yaml``) of these types, as
    ``[label ]name (type)``: definitions under models/, vault configs under
    vaults/. They stop working once the extension is gone."""
    out = []
    for t in types:
        d = root / t
        if d.is_dir():
            out += [f"{label}{p.stem} ({t})" for p in sorted(d.glob("*.yaml"))]
    return out


def install_all(repo, *, reinstall: bool = False) -> dict:
    """Restore exactly what the lockfile pins (every wheel hash-checked),
    and remove installs it no longer pins. An install whose files changed
    since is refused (``reinstall``: every pinned extension is installed
    again from its pinned wheels)."""
    counts = SyncCounts()
    lock = current_lockfile(repo, counts)
    if reinstall:
        for n in sorted(lock.extensions):
            install.remove(repo, n)
    todo = {n: e for n, e in lock.extensions.items() if not install.is_installed(repo, n, e)}
    for n, e in sorted(lock.extensions.items()):
        if n not in todo:
            install.verify(repo, n, e)
    with ThreadPoolExecutor(min(4, len(todo) or 1)) as pool:
        list(pool.map(lambda item: install.ensure(repo, *item), sorted(todo.items())))
    pruned = install.prune(repo, lock.extensions)
    return {"installed": sorted(todo), "alreadyInstalled": sorted(set(lock.extensions) - set(todo)),
            "removed": pruned, "sync": counts.to_json()}


def _updates(repo, lock: lockfile.Lockfile, name: str | None) -> list[dict]:
    from swamp.extensions.versions import latest, newer

    if name is not None:
        name = check_name(name)
        if name not in lock.extensions:
            raise NotFoundError(f"extension {name!r} is not pinned", hint="see 'swamp extension list'")
    names = [name] if name else sorted(lock.extensions)

    def one(n):
        e = lock.extensions[n]
        versions = [f.version for f in Index(e.index).files(n) if not f.yanked]
        new = latest(versions)
        return {"name": n, "pinned": e.version, "latest": new, "index": e.index,
                "outdated": bool(new and newer(new, e.version))}

    with ThreadPoolExecutor(min(8, len(names) or 1)) as pool:
        return list(pool.map(one, names))


def outdated(repo) -> dict:
    counts = SyncCounts()
    lock = current_lockfile(repo, counts)
    rows = _updates(repo, lock, None)
    return {"extensions": rows, "outdated": any(r["outdated"] for r in rows), "sync": counts.to_json()}


def update(repo, name: str | None = None, *, check: bool = False) -> dict:
    counts = SyncCounts()
    lock = current_lockfile(repo, counts)
    rows = [r for r in _updates(repo, lock, name) if r["outdated"]]
    updated, proposed = [], []
    if not check:
        for r in rows:
            result = pull(repo, f"{r['name']}=={r['latest']}", index=r["index"])
            counts.add(SyncCounts(**_counts_fields(result["sync"])))
            change = {"name": r["name"], "from": r["pinned"], "to": result["version"]}
            if result["proposed"]:
                proposed.append({**change, "proposal": result["proposed"]["id"]})
            elif result["changed"]:
                updated.append(change)
    return {"updates": [{"name": r["name"], "from": r["pinned"], "to": r["latest"]} for r in rows],
            "updated": updated, "proposed": proposed, "checkOnly": check, "sync": counts.to_json()}


def _counts_fields(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k in SyncCounts.FIELDS}


# ---------------------------------------------------------------- finding
def search(repo, query: str | None = None, *, index: str | None = None) -> dict:
    from swamp.extensions.versions import latest

    lock = current_lockfile(repo)
    found = []
    for ix in _indexes(lock, index):
        if ix.url.startswith(("https://pypi.org/", "https://test.pypi.org/")):
            # Its list of every project is tens of megabytes: not something to fetch per search.
            raise UsageError(f"{ix.url} cannot be searched from here (its index lists every project)",
                             hint=f"search on https://pypi.org/search/?q={query or ''}, then "
                                  "'swamp extension info NAME'")
        names = [n for n in ix.projects() if not query or query.lower() in n]
        found += [(ix, n) for n in names]
    truncated = len(found) > SEARCH_LIMIT
    found = found[:SEARCH_LIMIT]

    def row(item):
        ix, n = item
        pinned = lock.extensions.get(n)
        return {"name": n, "latest": latest(f.version for f in ix.files(n) if not f.yanked), "index": ix.url,
                "pinned": pinned.version if pinned else None}

    with ThreadPoolExecutor(8) as pool:
        rows = list(pool.map(row, found))
    return {"query": query or "", "results": rows, "truncated": truncated}


def info(repo, name: str, *, index: str | None = None) -> dict:
    from swamp.extensions.versions import latest

    name = check_name(name)
    lock = current_lockfile(repo)
    pinned = lock.extensions.get(name)
    indexes = [Index(index)] if index else ([Index(pinned.index)] if pinned else _indexes(lock, None))
    for ix in indexes:
        files = ix.files(name)
        if files:
            return {"name": name, "index": ix.url, "versions": _sorted_versions({f.version for f in files}),
                    "latest": latest(f.version for f in files if not f.yanked),
                    "pinned": pinned.model_dump(mode="json") if pinned else None,
                    "installed": bool(pinned and install.is_installed(repo, name, pinned))}
    if pinned:
        return {"name": name, "index": pinned.index, "versions": [], "latest": None,
                "pinned": pinned.model_dump(mode="json"), "installed": install.is_installed(repo, name, pinned)}
    raise NotFoundError(f"no index has {name!r}", hint=f"look with 'swamp extension search {name.split('-')[0]}'")


def _sorted_versions(versions) -> list[str]:
    from swamp.extensions.versions import _version_cls

    Version, Invalid = _version_cls()

    def key(v):
        try:
            return (0, Version(v))
        except Invalid:
            return (1, v)

    return sorted(versions, key=key)


# ---------------------------------------------------------------- trust
def trust_list(repo) -> dict:
    return {"trusted": sorted(current_lockfile(repo).trustedIndexes)}


def trust_add(repo, url: str) -> dict:
    url = normalize_url(url)
    counts = SyncCounts()
    records = []

    def edit(lock):
        if lock.trustedIndexes.get(url):
            return False
        lock.trustedIndexes[url] = True
        records[:] = [history.new_change("trust-add", history.identity(), index=url)]
        return True

    _change(repo, "extension trust add", edit, {"index": url}, counts, records)
    return {"index": url, "trusted": True, "sync": counts.to_json()}


def trust_rm(repo, url: str) -> dict:
    url = normalize_url(url)
    counts = SyncCounts()
    records = []

    def edit(lock):
        if url not in lock.trustedIndexes:
            raise NotFoundError(f"{url} is not trusted", hint="see 'swamp extension trust list'")
        del lock.trustedIndexes[url]
        records[:] = [history.new_change("trust-remove", history.identity(), index=url)]
        return True

    _change(repo, "extension trust rm", edit, {"index": url}, counts, records)
    return {"index": url, "trusted": False, "sync": counts.to_json()}
