"""Extension use cases for its author: ``swamp extension new``, ``check``
(the quality gate), ``fmt``, ``publish``, and ``source add|list|rm`` (a
local checkout's types loaded in this repository without publishing). The
lockfile's use cases (pull, rm, update, trust) are extensions.py."""

from __future__ import annotations

from pathlib import Path

from swamp.app.extension_probe import probe, probe_source
from swamp.app.extensions import current_lockfile, described_failure
from swamp.errors import ExtensionError, NotFoundError, UsageError
from swamp.extensions import install
from swamp.extensions.index import Index
from swamp.extensions.names import check_name


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
    return [Index(u) for u in sorted(current_lockfile(repo).trustedIndexes)]


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
                                 + "; ".join(described_failure(e) for e in report["errors"]),
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
                             + "; ".join(described_failure(f) for f in report["errors"]),
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
