"""``swamp doctor``: the checks a support engineer runs first, one entry
per check (``{check, status, message, hint, repaired}``, status ``ok``,
``warn`` or ``fail``).

Areas: ``datastores`` (reachable, conditional writes honoured, the sync
state describes the configured remote, leases of dead holders, unpublished
changes, conflict copies), ``extensions`` (the lockfile, each pin and its
install), ``vaults`` (each opens and decrypts), ``workflows`` (each
validates), ``secrets`` (no vault value in clear in the repository or
``.swamp/``; ``.swamp/`` ignored by git) and ``install`` (Python and the
packages swamp needs).

Doctor opens no session: it reads what it checks directly, so a datastore
that is down is a failed check, not an error. ``repair`` fixes only what is
provably safe (a lease whose holder on this machine is gone, through the
same fenced break as ``datastore lock release --force``; an install that
no longer matches its pin; installs nothing pins any more; the .gitignore
block) and each entry says what it did."""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from swamp.app import workflow_files
from swamp.app.datastore import _remote_identity
from swamp.datastore.locks import holder_exited
from swamp.datastore.objectstore.probe import probe_conditional_writes
from swamp.datastore.sync import identity
from swamp.datastore.sync.commitlog import list_from
from swamp.errors import RemoteChangedError, SwampError, UsageError
from swamp.extensions import install, lockfile
from swamp.repo.init import _write_gitignore
from swamp.util.names import did_you_mean
from swamp.vault import service

if TYPE_CHECKING:
    from swamp.repo.context import Repo

AREAS = ("datastores", "extensions", "vaults", "workflows", "secrets", "install")
#: files larger than this are not scanned for secrets (data content is read in full)
SCAN_MAX_BYTES = 64 * 1024 * 1024
#: shorter vault values would match by chance; they are not looked for
MIN_SECRET_LEN = 6


@dataclass
class Check:
    check: str
    status: str
    message: str
    hint: str | None = None
    repaired: str | None = None

    def to_json(self) -> dict:
        return {"check": self.check, "status": self.status, "message": self.message, "hint": self.hint,
                "repaired": self.repaired}


def run(repo: Repo, areas: list[str] | None = None, *, repair: bool = False,
        repo_error: SwampError | None = None) -> dict:
    """Run the checks of ``areas`` (all by default). ``repo`` may be None
    (no repository here: ``repo_error`` says why); only ``install`` runs
    without one. Returns ``{"ok", "summary", "checks"}``; ``ok`` is false
    when any check failed."""
    wanted = list(areas or AREAS)
    for a in wanted:
        if a not in AREAS:
            raise UsageError(f"unknown doctor area {a!r}",
                             hint=did_you_mean(a, AREAS) or f"areas: {', '.join(AREAS)}")
    checks: list[Check] = []
    for area in AREAS:
        if area not in wanted:
            continue
        if area != "install" and repo is None:
            checks.append(Check(f"{area}", "fail", repo_error.message if repo_error else "no repository",
                                repo_error.hint if repo_error else "run 'swamp repo init', or pass --repo-dir"))
            continue
        fn: Callable = _AREAS[area]
        try:
            checks.extend(fn(repo, repair) if area != "install" else fn(repair))
        except SwampError as e:
            checks.append(Check(area, "fail", e.message, e.hint))
    checks.sort(key=lambda c: c.check)
    summary = {s: sum(c.status == s for c in checks) for s in ("ok", "warn", "fail")}
    return {"ok": summary["fail"] == 0, "summary": summary, "checks": [c.to_json() for c in checks]}


# ================================================================ datastores
def _datastores(repo: Repo, repair: bool) -> list[Check]:
    try:
        ds = repo.datastore
    except SwampError as e:
        return [Check("datastore.open", "fail", f"the datastore cannot be opened: {e.message}", e.hint)]
    except (OSError, ValueError) as e:
        return [Check("datastore.open", "fail", f"the datastore cannot be opened: {e}",
                      "check the datastore section of .swamp.yaml")]
    engine = getattr(ds, "engine", None)
    out: list[Check] = []
    if engine is None:
        out.append(_directory_writable(ds.root))
        if out[-1].status == "fail":
            return out
    else:
        reach = _remote_reachable(engine)
        out.append(reach)
        if reach.status == "fail":
            return out
        out.append(_conditional_writes(engine.store))
        out.append(_sync_state(repo, engine))
        out.extend(_shared_local_state(engine))
    out.extend(_leases(ds, repair))
    return out


def _directory_writable(root: Path) -> Check:
    """A scratch file created exclusively (O_EXCL, the filesystem's
    create-only) and removed again."""
    scratch = root / f".doctor-{uuid.uuid4().hex}"
    try:
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        try:
            os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            return Check("datastore.reachable", "fail", f"{root}: a second exclusive create of the same file "
                         "succeeded", "this filesystem cannot hold a datastore shared by several processes")
        except FileExistsError:
            pass
    except OSError as e:
        return Check("datastore.reachable", "fail", f"cannot write to the datastore directory {root}: "
                     f"{e.strerror or e}", "check that it exists and that you may write to it")
    finally:
        try:
            scratch.unlink()
        except OSError:
            pass
    return Check("datastore.reachable", "ok", f"directory {root} is writable; exclusive creates are honoured")


def _remote_reachable(engine) -> Check:
    layout = engine.layout
    try:
        fmt = engine.store.head(layout.format_key)
    except SwampError as e:
        return Check("datastore.reachable", "fail", f"{engine.store.name} is not reachable: {e.message}",
                     "check the endpoint, the network and the credentials; commands that need the shared "
                     "datastore fail until it is back ('--offline' works from the local cache)")
    if fmt is None:
        return Check("datastore.reachable", "warn", f"{engine.store.name}{layout.namespace}/ is reachable but "
                     "holds no swamp datastore (no format.json)",
                     "publish this repository with 'swamp datastore setup s3|gcs ...' or 'swamp datastore sync'")
    return Check("datastore.reachable", "ok", f"{engine.store.name}{layout.namespace}/ is reachable")


def _conditional_writes(store) -> Check:
    try:
        probe_conditional_writes(store)  # a scratch key under _probe/, deleted again
    except SwampError as e:
        return Check("datastore.conditional-writes", "fail", e.message, e.hint)
    return Check("datastore.conditional-writes", "ok",
                 "create-only and compare-and-swap writes are honoured (checked on a scratch key, removed)")


def _sync_state(repo: Repo, engine) -> Check:
    name = "datastore.sync-state"
    hint = RemoteChangedError.ATTACH_HINT
    cfg = repo.config.datastore
    marker = repo.local_dir / ".sync" / "remote.json"
    if cfg is not None and marker.is_file():
        if marker.read_text() != _remote_identity(cfg):
            return Check(name, "fail", "the cache's sync state was set up for another remote than .swamp.yaml "
                         "names (bucket, prefix, namespace or server changed by hand)",
                         "to change the namespace use 'swamp datastore namespace set|migrate'; otherwise " + hint)
    try:
        remote = identity.read(engine.store, engine.layout)
        mine = engine.state.get_meta("remote")
        head = engine.state.head
        if mine is None and head == 0:
            return Check(name, "ok", "this cache has not synced yet")
        if remote is None:
            return Check(name, "fail", "the remote has no identity, but this cache has synced with one: "
                         "it was emptied or is another remote", hint)
        if mine is not None and mine != remote:
            return Check(name, "fail", f"the remote's identity is {remote}, this cache's is {mine}: "
                         "the cache describes another remote", hint)
        if head > 0:
            identity.check_listing(engine.state, f"{engine.store.name}{engine.layout.namespace}", head,
                                   list_from(engine.store, engine.layout, head))
    except RemoteChangedError as e:
        return Check(name, "fail", e.message, e.hint)
    except SwampError as e:
        return Check(name, "fail", e.message, e.hint)
    return Check(name, "ok", f"the cache's sync state (head {head}) matches the remote {remote}")


def _shared_local_state(engine) -> list[Check]:
    try:
        st = engine.status()
    except SwampError as e:
        return [Check("datastore.unpublished", "fail", e.message, e.hint)]
    out = []
    dirty = st["dirtyFiles"]
    if dirty:
        out.append(Check("datastore.unpublished", "warn", f"{len(dirty)} change(s) made here are not published",
                         "publish them with 'swamp datastore sync'"))
    else:
        out.append(Check("datastore.unpublished", "ok", "everything made here is published"))
    conflicts = st.get("conflicts", [])
    if conflicts:
        out.append(Check("datastore.conflicts", "warn", f"{len(conflicts)} conflict copies kept aside "
                         f"({', '.join(sorted(c['path'] for c in conflicts)[:3])}"
                         f"{' ...' if len(conflicts) > 3 else ''})",
                         "resolve them with 'swamp datastore conflicts list|restore|drop'"))
    else:
        out.append(Check("datastore.conflicts", "ok", "no conflict copies"))
    return out


def _leases(ds, repair: bool) -> list[Check]:
    """Leases held. One whose holder ran on this machine and whose process
    is gone is provably stale (it will never heartbeat nor release); it is
    broken on --repair through the datastore's force release (fenced in the
    shared log, as 'lock release --force' does). A holder elsewhere cannot
    be judged from one look (no clock is trusted): reported, left alone."""
    try:
        rows = ds.lock_status()
    except SwampError as e:
        return [Check("datastore.leases", "fail", f"cannot list the leases: {e.message}", e.hint)]
    out = []
    live = []
    for r in rows:
        who = f"{r.get('holder') or 'unknown'} on {r.get('host') or '?'} (pid {r.get('pid')}, since " \
              f"{r.get('acquiredAt') or '?'})"
        if holder_exited(r):
            repaired = None
            if repair:
                try:
                    repaired = (f"released lease {r['name']}" if ds.force_release(r["name"])
                                else f"lease {r['name']} was already gone")
                except SwampError as e:
                    out.append(Check(f"datastore.lease:{r['name']}", "fail",
                                     f"held by {who}, whose process is gone; releasing it failed: {e.message}",
                                     e.hint))
                    continue
            out.append(Check(f"datastore.lease:{r['name']}", "ok" if repaired else "warn",
                             f"held by {who}, whose process is gone",
                             None if repaired else "'swamp doctor datastores --repair' releases it "
                             f"(or 'swamp datastore lock release {r['name']} --force')", repaired))
        else:
            live.append(f"{r['name']} by {who}")
    if live:
        out.append(Check("datastore.leases", "ok", f"{len(live)} lease(s) held by live or remote holders: "
                         + "; ".join(live[:5]) + (" ..." if len(live) > 5 else ""),
                         "a holder elsewhere that stopped heartbeating is taken over once its ttl passes"))
    elif not out:
        out.append(Check("datastore.leases", "ok", "no leases held"))
    return out


# ================================================================ extensions
def _extensions(repo: Repo, repair: bool) -> list[Check]:
    try:
        lock = lockfile.read(repo)
    except SwampError as e:
        return [Check("extensions.lockfile", "fail", e.message, e.hint)]
    out = [Check("extensions.lockfile", "ok", f"{lockfile.location(repo)}: {len(lock.extensions)} extension(s) "
                 "pinned")]
    out += _local_type_files(repo)
    for name, entry in sorted(lock.extensions.items()):
        check = f"extensions.{name}"
        own = entry.wheel_of(name) or next((w for w in entry.wheels if w.project.replace("_", "-")
                                             == name.replace("_", "-")), None)
        if not entry.wheels or own is None:
            out.append(Check(check, "fail", f"{name} {entry.version}: the pin names no wheel of {name} itself",
                             f"pin it again with 'swamp extension pull {name}'"))
            continue
        where = install.target(repo, name, entry)
        altered = _altered_files(where) if install.is_installed(repo, name, entry) else []
        altered = altered or install.changed_files(repo, name, entry)  # against the record made at install
        if install.is_installed(repo, name, entry) and not altered:
            out.append(Check(check, "ok", f"{name} {entry.version}: installed from its {len(entry.wheels)} pinned "
                             "wheel(s); every installed file matches its wheel's RECORD hash"))
        elif altered:
            repaired = None
            if repair:
                install.remove(repo, name)
                repaired = f"removed the altered install of {name} (reinstalled from the pin on first use)"
            out.append(Check(check, "ok" if repaired else "fail",
                             f"{name} {entry.version}: {len(altered)} installed file(s) differ from the pinned "
                             f"wheels: {', '.join(altered[:3])}{' ...' if len(altered) > 3 else ''}",
                             None if repaired else "'swamp doctor extensions --repair' removes the install; it "
                             "is reinstalled from the pin on first use", repaired))
        elif where.exists():
            repaired = None
            if repair:
                install.remove(repo, name)
                repaired = f"removed the install of {name} that does not match its pin (reinstalled on first use)"
            out.append(Check(check, "ok" if repaired else "fail",
                             f"{name} {entry.version}: the installed files at {_rel(repo, where)} do not match "
                             "the pinned hashes", None if repaired else
                             "'swamp doctor extensions --repair' removes it; it is reinstalled from the pin on "
                             "first use", repaired))
        else:
            out.append(Check(check, "ok", f"{name} {entry.version}: pinned, not installed here yet (installed "
                             "from the pinned hashes on first use)"))
    pinned_dirs = {install.target(repo, n, e).name for n, e in lock.extensions.items()}
    root = install.root(repo)
    stray = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in pinned_dirs
                   and not p.name.startswith(".")) if root.is_dir() else []
    if stray:
        repaired = None
        if repair:
            install.prune(repo, dict(lock.extensions))
            repaired = f"removed {len(stray)} install(s) nothing pins: {', '.join(stray)}"
        out.append(Check("extensions.installs", "ok" if repaired else "warn",
                         f"{len(stray)} install(s) under {_rel(repo, root)} match no pin: {', '.join(stray)}",
                         None if repaired else "'swamp doctor extensions --repair' removes them", repaired))
    return out


def _local_type_files(repo) -> list[Check]:
    from swamp.app.local_type_files import local_type_problems

    loaded, problems = local_type_problems(repo)
    out = [Check(name, "fail", message, hint) for name, message, hint in problems]
    if loaded or not problems:
        out.append(Check("extensions.local", "ok", f"{len(loaded)} local model type(s) load"
                         + (f": {', '.join(loaded)}" if loaded else "")))
    return out


def _altered_files(where: Path) -> list[str]:
    """Installed files whose bytes differ from the hash their wheel's
    RECORD lists (or that are missing), relative to the install."""
    import base64
    import csv
    import hashlib

    out = []
    for record in sorted(where.glob("*.dist-info/RECORD")):
        try:
            rows = list(csv.reader(record.read_text().splitlines()))
        except (OSError, csv.Error):
            out.append(str(record.relative_to(where)))
            continue
        for row in rows:
            if len(row) < 2 or not row[1].startswith("sha256="):
                continue
            parts = row[0].split("/")
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                    continue  # scripts, headers, data: not installed
                parts = parts[2:]
            if ".." in parts or row[0].startswith("/"):
                continue
            path = where.joinpath(*parts)
            try:
                digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
            except OSError:
                out.append("/".join(parts))
                continue
            if digest != row[1][len("sha256="):]:
                out.append("/".join(parts))
    return sorted(out)


# ==================================================================== vaults
def _vault_values(repo: Repo) -> tuple[list[Check], list[tuple[str, str, str]]]:
    """Open each vault and decrypt every key: (checks, [(vault, key, value)])."""
    checks, values = [], []
    try:
        vaults = service.list_vaults(repo)
    except SwampError as e:
        return [Check("vaults", "fail", e.message, e.hint)], []
    if not vaults:
        return [Check("vaults", "ok", "no vaults")], []
    for v in vaults:
        name = v["name"]
        try:
            vault = service.get_vault(repo, name)
            keys = vault.list_keys()
            for key in keys:
                values.append((name, key, vault.get(key)))
        except SwampError as e:
            checks.append(Check(f"vaults.{name}", "fail", f"vault {name} cannot be opened: {e.message}", e.hint))
            continue
        except (OSError, ValueError) as e:
            checks.append(Check(f"vaults.{name}", "fail", f"vault {name} cannot be opened: {type(e).__name__}",
                                "its key or a secret file is unreadable; restore .swamp/secrets from a backup"))
            continue
        checks.append(Check(f"vaults.{name}", "ok", f"vault {name} opens; {len(keys)} secret(s) decrypt"))
    return checks, values


def _vaults(repo: Repo, repair: bool) -> list[Check]:
    return _vault_values(repo)[0]


# ================================================================= workflows
def _workflows(repo: Repo, repair: bool) -> list[Check]:
    result = workflow_files.validate(repo, None)
    if not result["workflows"]:
        return [Check("workflows", "ok", "no workflows")]
    out = []
    for w in result["workflows"]:
        check = f"workflows.{w['name']}"
        if w["errors"]:
            out.append(Check(check, "fail", f"{w['path']}: " + "; ".join(w["errors"]),
                             f"fix it, then 'swamp workflow validate {w['name']}'"))
        elif w.get("warnings"):
            out.append(Check(check, "warn", f"{w['path']}: " + "; ".join(w["warnings"])))
        else:
            out.append(Check(check, "ok", f"{w['path']} validates"))
    return out


# =================================================================== secrets
#: never scanned: the encrypted secrets themselves, git's objects, virtualenvs
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__"}


def _secrets(repo: Repo, repair: bool) -> list[Check]:
    out = [_gitignored(repo, repair)]
    vault_checks, values = _vault_values(repo)
    out.extend(c for c in vault_checks if c.status == "fail")
    values = [(v, k, s) for v, k, s in values if len(s) >= MIN_SECRET_LEN]
    if not values:
        out.append(Check("secrets.clear", "ok", "no vault secrets to look for"))
        return out
    found = _scan(repo, values)
    if not found:
        out.append(Check("secrets.clear", "ok", f"none of {len(values)} vault secret(s) appears in clear in the "
                         "repository or .swamp/"))
        return out
    for (vault, key), paths in sorted(found.items()):
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        out.append(Check(f"secrets.clear:{vault}/{key}", "fail",
                         f"the value of {vault}/{key} appears in clear in {len(paths)} file(s): {shown}",
                         "remove it from those files (and from git history if committed), then rotate the "
                         f"secret with 'swamp vault put {vault} {key}'; reference it as "
                         f"${{{{ vault.get('{vault}', '{key}') }}}} instead"))
    return out


def _scan(repo: Repo, values: list[tuple[str, str, str]]) -> dict[tuple[str, str], list[str]]:
    by_value: dict[bytes, list[tuple[str, str]]] = {}
    for vault, key, value in values:
        by_value.setdefault(value.encode(), []).append((vault, key))
    pattern = re.compile(b"|".join(re.escape(v) for v in sorted(by_value, key=len, reverse=True)))
    secrets_dir = repo.secrets_dir.resolve()
    found: dict[tuple[str, str], list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(repo.root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and (here / d).resolve() != secrets_dir)
        for f in sorted(filenames):
            path = here / f
            try:
                if not path.is_file() or path.stat().st_size > SCAN_MAX_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            hits = {m.group(0) for m in pattern.finditer(data)}
            for value in hits:
                for vk in by_value[value]:
                    found.setdefault(vk, []).append(_rel(repo, path))
    return found


def _gitignored(repo: Repo, repair: bool) -> Check:
    """.swamp/ (the secrets' keys, the caches) must stay out of git."""
    path = repo.root / ".gitignore"
    try:
        lines = [ln.strip() for ln in path.read_text().splitlines()]
    except FileNotFoundError:
        lines = []
    if any(ln in (".swamp", ".swamp/", "/.swamp", "/.swamp/") for ln in lines):
        return Check("secrets.gitignore", "ok", ".swamp/ is ignored by git")
    if repair:
        _write_gitignore(path)
        return Check("secrets.gitignore", "ok", ".swamp/ was not ignored by git", repaired="added .swamp/ to "
                     ".gitignore (the swamp managed block)")
    return Check("secrets.gitignore", "fail", ".swamp/ (the vault keys among it) is not ignored by git",
                 "'swamp doctor secrets --repair' adds it to .gitignore")


# =================================================================== install
#: optional parts: extra -> (a module it provides, what needs it)
_EXTRAS = {"serve": ("uvicorn", "swamp serve"), "gcs": ("google.cloud.storage", "GCS datastores"),
           "workers": ("distributed", "swamp worker")}


def _install(repair: bool) -> list[Check]:
    import importlib.util
    import sys
    from importlib import metadata

    out = []
    version = ".".join(map(str, sys.version_info[:3]))
    try:
        dist = metadata.distribution("swamp")
        requires_python = dist.metadata.get("Requires-Python") or ""
        swamp_version = dist.version
        requirements = dist.requires or []
    except metadata.PackageNotFoundError:
        requires_python, swamp_version, requirements = "", "unknown (not installed as a package)", []
    minimum = re.match(r">=\s*(\d+)\.(\d+)", requires_python)
    if minimum and sys.version_info[:2] < (int(minimum.group(1)), int(minimum.group(2))):
        out.append(Check("install.python", "fail", f"Python {version} at {sys.executable}; swamp needs "
                         f"{requires_python}", f"install swamp with Python {minimum.group(1)}.{minimum.group(2)} "
                         "or newer"))
    else:
        out.append(Check("install.python", "ok", f"Python {version} at {sys.executable} (swamp {swamp_version})"))
    missing, present = [], 0
    for req in requirements:
        if "extra ==" in req:
            continue
        name = re.split(r"[ ;<>=!~\[]", req, 1)[0]
        marker = req.split(";", 1)[1] if ";" in req else ""
        if "platform_python_implementation" in marker and "CPython" in marker and sys.implementation.name != "cpython":
            continue
        try:
            metadata.version(name)
            present += 1
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        out.append(Check("install.packages", "fail", f"required packages missing: {', '.join(sorted(missing))}",
                         "reinstall swamp: pip install swamp (or pip install -e . in a checkout)"))
    else:
        out.append(Check("install.packages", "ok", f"{present} required package(s) installed"))
    broken = []
    for module in ("click", "pydantic", "ruamel.yaml", "obstore", "cryptography"):
        try:
            __import__(module)
        except Exception as e:  # an installed package that does not import is exactly what to report
            broken.append(f"{module} ({type(e).__name__}: {e})")
    if broken:
        out.append(Check("install.imports", "fail", "installed but not importable: " + "; ".join(broken),
                         "reinstall those packages in this environment"))
    else:
        out.append(Check("install.imports", "ok", "the required packages import"))
    for extra, (module, needed_by) in sorted(_EXTRAS.items()):
        try:
            present_extra = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            present_extra = False
        out.append(Check(f"install.extra.{extra}", "ok",
                         f"{extra}: installed" if present_extra else
                         f"{extra}: not installed (only {needed_by} needs it: pip install 'swamp[{extra}]')"))
    return out


def _rel(repo: Repo, path: Path) -> str:
    try:
        return str(Path(path).relative_to(repo.root))
    except ValueError:
        return str(path)


_AREAS = {"datastores": _datastores, "extensions": _extensions, "vaults": _vaults, "workflows": _workflows,
          "secrets": _secrets, "install": _install}

