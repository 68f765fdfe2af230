"""Extension use cases (``swamp extension ...``).

A change to the lockfile (pull, rm, update, trust) happens in two parts:
first, outside any lease, the download, the hash checks, the install into
the repository's local state and the check that its types load; then ONE
``changing`` session under the lockfile's lease reads the current lockfile
(as of the session's pull, so a peer's entries are there), changes only
this extension's entry, writes it and publishes one commit. An entry that a
peer changed since this command looked at it is a named conflict, never
overwritten. A failed publish raises UnpublishedError with the result
attached; the next command that changes state publishes it."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from swamp.app.lifecycle import changing, reading
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ConflictError, ExtensionError, NotFoundError, UnpublishedError, UsageError
from swamp.extensions import history, install, lockfile
from swamp.extensions.index import Index, normalize_url
from swamp.extensions.lockfile import Entry
from swamp.extensions.names import check_name, parse_spec

#: search shows at most this many matches (one request each for the latest version)
SEARCH_LIMIT = 50


# ---------------------------------------------------------------- reading
def _current(repo, counts: SyncCounts | None = None) -> lockfile.Lockfile:
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
    lock = _current(repo, counts)
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
    lock = _current(repo, counts)
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
                             + "; ".join(_where(f) for f in report["errors"]),
                             hint="fix the extension and publish a new version, or pin another version")
    if not (report["types"] or report["vaultTypes"] or report["reportTypes"]):
        raise ExtensionError(f"{name} {entry.version} provides no model type, vault type or report type",
                             hint="an extension declares its types under the entry point groups "
                                  "'swamp.model_types', 'swamp.vault_types' or 'swamp.report_types'")
    return entry.model_copy(update={"types": sorted(report["types"]), "vaultTypes": sorted(report["vaultTypes"]),
                                    "reportTypes": sorted(report["reportTypes"])})


def _where(f: dict) -> str:
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
    lock = _current(repo, counts)
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
    lock = _current(repo, counts)
    rows = _updates(repo, lock, None)
    return {"extensions": rows, "outdated": any(r["outdated"] for r in rows), "sync": counts.to_json()}


def update(repo, name: str | None = None, *, check: bool = False) -> dict:
    counts = SyncCounts()
    lock = _current(repo, counts)
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

    lock = _current(repo)
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
    lock = _current(repo)
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
    return {"trusted": sorted(_current(repo).trustedIndexes)}


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


# ---------------------------------------------------------------- authoring
def new(name: str, path: str | None = None, *, vault: bool = False) -> dict:
    from swamp.extensions.authoring import scaffold

    dest = Path(path) if path else Path.cwd() / check_name(name)
    files = scaffold(name, dest, vault=vault)
    return {"name": check_name(name), "path": str(dest.absolute()), "files": files}


def _published_on(repo, index: str | None) -> list[Index]:
    if index:
        return [Index(index)]
    if repo is None:
        return []
    return [Index(u) for u in sorted(_current(repo).trustedIndexes)]


def check(repo, path: str | None = None, *, index: str | None = None) -> dict:
    """The quality gate: it builds, imports in a clean environment (with its
    dependencies), every type loads, schemas are valid, methods are
    described, and the version is not already on the index."""
    import tempfile

    from swamp.extensions.authoring import read_project

    project = read_project(Path(path or ".").absolute())
    with tempfile.TemporaryDirectory(prefix="swamp-check-") as tmp:
        report = _check_built(project, Path(tmp), _published_on(repo, index))
    report.pop("_wheel")
    return report


def _check_built(project, tmp: Path, indexes: list[Index]) -> dict:
    from swamp.extensions.authoring import build_wheel, source_of

    dist = tmp / "dist"
    wheel = build_wheel(project, dist)
    target = tmp / "target"
    target.mkdir()
    for w in sorted(dist.glob("*.whl")):
        install.unpack(w, target)
    report = probe(target, project.name)
    errors = [{**e, "file": source_of(e["file"], target, project.path)} for e in report["errors"]]
    if not (report["types"] or report["vaultTypes"] or report["reportTypes"]) and not errors:
        errors.append({"file": str(project.path / "pyproject.toml"), "line": None,
                       "message": "no type: declare model types under [project.entry-points.\"swamp.model_types\"] "
                                  "(or vault types under \"swamp.vault_types\", report types under "
                                  "\"swamp.report_types\")"})
    for ix in indexes:
        if any(f.version == project.version for f in ix.files(project.name)):
            errors.append({"file": str(project.path / "pyproject.toml"), "line": None,
                           "message": f"version {project.version} is already on {ix.url}: raise the version"})
    return {"name": project.name, "version": project.version, "path": str(project.path), "wheel": wheel.name,
            "types": report["types"], "vaultTypes": report["vaultTypes"], "reportTypes": report["reportTypes"],
            "errors": errors, "valid": not errors,
            "indexes": [ix.url for ix in indexes], "_wheel": wheel}


def fmt(path: str | None = None, *, check: bool = False) -> dict:
    from swamp.extensions.authoring import fmt as fmt_

    return fmt_(Path(path or ".").absolute(), check=check)


def publish(repo, path: str | None = None, *, index: str | None = None) -> dict:
    """Check, then upload the wheel (credentials from the environment or the
    usual config files; swamp writes none)."""
    import shutil
    import tempfile

    from swamp.extensions.authoring import read_project, upload, upload_url

    indexes = _published_on(repo, index)
    if len(indexes) != 1:
        raise UsageError("which index to publish to?" if not indexes else "more than one index is trusted",
                         hint="pass --index URL")
    project = read_project(Path(path or ".").absolute())
    with tempfile.TemporaryDirectory(prefix="swamp-publish-") as tmp:
        report = _check_built(project, Path(tmp), indexes)
        if not report["valid"]:
            raise ExtensionError(f"{project.name} {project.version} does not pass 'swamp extension check': "
                                 + "; ".join(_where(e) for e in report["errors"]),
                                 hint="fix it, then publish again")
        url = upload_url(indexes[0].url)
        if url.startswith("file:"):  # a directory of wheels: publishing is copying into it
            from swamp.extensions.index import path_of

            url = str(path_of(url))
            Path(url).mkdir(parents=True, exist_ok=True)
            shutil.copy2(report["_wheel"], Path(url) / report["wheel"])
        else:
            upload(report["_wheel"], project, url)
        kept = project.path / "dist"
        kept.mkdir(exist_ok=True)
        shutil.copy2(report["_wheel"], kept / report["wheel"])
    return {"name": project.name, "version": project.version, "wheel": report["wheel"], "types": report["types"],
            "vaultTypes": report["vaultTypes"], "reportTypes": report["reportTypes"],
            "index": indexes[0].url, "uploadedTo": url}


# ---------------------------------------------------------------- sources
def source_add(repo, path: str) -> dict:
    """Load a local checkout's types in this repository, without publishing
    (ahead of a pinned version of the same extension, on this machine only)."""
    from swamp.extensions import sources
    from swamp.extensions.authoring import read_project

    project = read_project(Path(path).resolve())
    report = probe_source(project.path)
    if report["errors"]:
        raise ExtensionError(f"{project.name} at {project.path}: its types do not load: "
                             + "; ".join(_where(f) for f in report["errors"]),
                             hint="fix it, then add it again")
    current = sources.read(repo)
    taken = {t: n for n, s in current.items() if n != project.name for t in s.get("types", [])}
    clashes = sorted(f"{t} (source {taken[t]})" for t in report["types"] if t in taken)
    if clashes:
        raise ExtensionError(f"{project.name} provides types another source provides: " + ", ".join(clashes))
    current[project.name] = {"path": str(project.path), "types": report["types"],
                             "vaultTypes": report["vaultTypes"]}
    sources.write(repo, current)
    return {"name": project.name, "path": str(project.path), "types": report["types"],
            "vaultTypes": report["vaultTypes"], "reportTypes": report["reportTypes"]}


def source_list(repo) -> dict:
    from swamp.extensions import sources

    return {"sources": [{"name": n, **s} for n, s in sorted(sources.read(repo).items())]}


def source_rm(repo, name_or_path: str) -> dict:
    from swamp.extensions import sources

    current = sources.read(repo)
    as_path = str(Path(name_or_path).resolve())
    for n, s in sorted(current.items()):
        if n == name_or_path or s.get("path") == as_path:
            del current[n]
            sources.write(repo, current)
            return {"name": n, "path": s.get("path")}
    raise NotFoundError(f"no source {name_or_path!r}", hint="see 'swamp extension source list'")


def probe_source(path: Path) -> dict:
    return _run_probe(["--source", str(path)], path)


# ---------------------------------------------------------------- probing
def probe(target: Path, name: str) -> dict:
    """Load an installed extension's types in a clean Python process (its
    directory on the path, nothing else of the repository's) and check
    them: every entry point loads, schemas valid, methods described.
    Returns {"types", "errors": [{"file", "line", "message"}]}."""
    return _run_probe([str(target), name], target)


def _run_probe(args: list[str], target: Path) -> dict:
    import swamp

    # -I: no PYTHONPATH, no user site, not the current directory; only swamp
    # itself is put back, wherever this swamp was imported from.
    home = str(Path(swamp.__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {home!r}); from swamp.app.extensions import _probe_main; _probe_main()"
    proc = subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True,
                          env=_probe_environment())
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"types": [], "errors": [{"file": str(target), "line": None,
                                         "message": "loading it crashed: " + " / ".join(tail)}]}


#: all the probe gets of this process's environment: what a Python needs to
#: start and import, never this process's tokens, keys or webhook secrets
#: (an extension's import-time code runs in the probe, before anyone used it)
PROBE_ENVIRONMENT = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "SYSTEMROOT")


def _probe_environment() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in PROBE_ENVIRONMENT}


def _probe_here(target: Path, name: str | None) -> dict:
    """``name`` None: ``target`` is a local checkout, not an install."""
    from dataclasses import asdict

    from swamp.extensions.environment import (MODEL_TYPES_GROUP, REPORT_TYPES_GROUP, VAULT_TYPES_GROUP, load,
                                              load_source)
    from swamp.models.registry import types_of

    def objects_of(group):
        return load(target, name, (group,)) if name is not None else load_source(target, (group,))

    objects, failures = objects_of(MODEL_TYPES_GROUP)
    errors = [asdict(f) for f in failures]
    vault = _probe_vault_types(*objects_of(VAULT_TYPES_GROUP), target)
    reports = _probe_report_types(objects, *objects_of(REPORT_TYPES_GROUP), target)
    errors += vault["errors"] + reports["errors"]
    types = []
    for obj in objects:
        found = types_of(obj)
        if not found:
            errors.append({"file": str(getattr(obj, "__file__", target)), "line": None,
                           "message": f"{obj!r} is neither a ModelType nor a module holding one"[:300]})
        for t in found:
            try:
                t.describe()  # every schema turns into JSON schema
            except Exception as e:
                errors.append({"file": _file_of(t), "line": None,
                               "message": f"type {t.type}: invalid schema: {type(e).__name__}: {e}"})
                continue
            for m in sorted(t.methods.values(), key=lambda m: m.name):
                if not (m.description or "").strip():
                    errors.append({"file": _file_of(t), "line": _line_of(m.fn),
                                   "message": f"type {t.type}: method {m.name} has no description"})
            types.append(t.type)
    unique = list({json.dumps(e, sort_keys=True): e for e in errors}.values())  # each group says "declares nothing"
    return {"types": sorted(set(types)), "vaultTypes": vault["types"], "reportTypes": reports["types"],
            "errors": unique}


def _probe_vault_types(objects: list, failures: list, target: Path) -> dict:
    """Each ``swamp.vault_types`` entry point names a vault type whose
    description and settings describe themselves."""
    from dataclasses import asdict

    from swamp.errors import SwampError
    from swamp.vault.registry import as_vault_type

    errors, types = [asdict(f) for f in failures], []
    for obj in objects:
        where = str(getattr(obj, "__file__", None) or getattr(sys.modules.get(getattr(obj, "__module__", "")),
                                                               "__file__", None) or target)
        what = getattr(obj, "__name__", None) or type(obj).__name__
        try:
            vt = as_vault_type(obj, f"vault type {what}")
            vt.describe()
        except SwampError as e:
            errors.append({"file": where, "line": _class_line(obj), "message": e.message})
            continue
        except Exception as e:
            errors.append({"file": where, "line": _class_line(obj),
                           "message": f"vault type {what}: {type(e).__name__}: {e}"})
            continue
        types.append(vt.name)
    return {"types": sorted(set(types)), "errors": errors}


def _class_line(obj) -> int | None:
    import inspect

    try:
        return inspect.getsourcelines(obj if isinstance(obj, type) else type(obj))[1]
    except (OSError, TypeError):
        return None


def _probe_report_types(model_objects: list, objects: list, failures: list, target: Path) -> dict:
    """The report types: those ``swamp.report_types`` names, and those in a
    model type's module (as the report registry finds them)."""
    from dataclasses import asdict

    from swamp.reports.registry import reports_in

    errors, names = [asdict(f) for f in failures], []
    for obj in objects:
        found = reports_in(obj)
        if not found:
            errors.append({"file": str(getattr(obj, "__file__", target)), "line": None,
                           "message": f"{obj!r} is neither a ReportType nor a module holding one"[:300]})
        names += [r.name for r in found]
    for obj in model_objects:
        names += [r.name for r in reports_in(obj)]
    return {"types": sorted(set(names)), "errors": errors}


def _file_of(t) -> str:
    for m in t.methods.values():
        return m.fn.__code__.co_filename
    return "?"


def _line_of(fn) -> int | None:
    return getattr(getattr(fn, "__code__", None), "co_firstlineno", None)


def _probe_main() -> None:
    """The clean process ``probe`` starts."""
    if sys.argv[1] == "--source":
        print(json.dumps(_probe_here(Path(sys.argv[2]), None)))
    else:
        print(json.dumps(_probe_here(Path(sys.argv[1]), sys.argv[2])))
