"""Workflows shipped in an extension package, as it ships model types
(docs/extensions.md, "Workflows in an extension").

An extension declares one entry point in the group ``swamp.workflows``
whose value names a folder of its package (``acme_tools.workflows``), laid
out as a repository's ``workflows/`` folder. Its workflows are scoped by
the extension's name: ``@acme-tools/deploy`` is the file
``@acme-tools/workflow-deploy.yaml`` in that folder of the extension
``acme-tools``. So a scoped name says which extension to look in, and a
name that no extension claims never installs anything.

A repository's own ``workflows/@acme-tools/workflow-deploy.yaml`` wins: the
extension's is looked for only when the repository has none. The files
come from the same place its model types do: a local checkout (``swamp
extension source add``) first, else the pinned install, hash-checked
(``install.ensure``). They are YAML, read as data; nothing is imported."""

from __future__ import annotations

from pathlib import Path

from swamp.extensions.environment import WORKFLOWS_GROUP
from swamp.util.names import SCOPED_NAME_RE

PREFIX = "workflow-"


def find(repo, name: str) -> Path | None:
    """The file of the scoped workflow ``name`` in the extension its scope
    names (None: not scoped, no such extension, or not among its workflows)."""
    scoped = SCOPED_NAME_RE.match(name or "")
    if not scoped:
        return None
    folder = folder_of(repo, scoped.group(1))
    if folder is None:
        return None
    path = folder / f"@{scoped.group(1)}" / f"{PREFIX}{scoped.group(2)}.yaml"
    return path if path.is_file() else None


def folder_of(repo, extension: str) -> Path | None:
    """The workflows folder the extension named ``extension`` declares, or None."""
    from swamp.extensions import lockfile, sources
    from swamp.extensions.names import normalize

    wanted = normalize(extension)
    for name, source in sorted(sources.read(repo).items()):
        if normalize(name) == wanted and source.get("path"):
            return _source_folder(Path(source["path"]))
    for name, entry in sorted(lockfile.read(repo).extensions.items()):
        if normalize(name) == wanted:
            return _installed_folder(repo, name, entry)
    return None


def _source_folder(checkout: Path) -> Path | None:
    from swamp.extensions.environment import source_dir, source_entry_points

    try:
        declared = source_entry_points(checkout, (WORKFLOWS_GROUP,))
    except (OSError, ValueError):
        return None
    return _inside(source_dir(checkout), declared.values())


def ships_workflows(target: Path, name: str) -> bool:
    """Whether the install at ``target`` declares a folder holding at least
    one workflow (what lets a package with no types be an extension)."""
    folder = _install_folder(target, name)
    return folder is not None and any(f.is_file() for f in folder.glob(f"@*/{PREFIX}*.yaml"))


def _installed_folder(repo, name: str, entry) -> Path | None:
    from swamp.extensions import install

    return _install_folder(install.ensure(repo, name, entry), name)  # installed if needed, checked unchanged


def _install_folder(target: Path, name: str) -> Path | None:
    """The workflows folder the distribution installed at ``target`` declares, or None."""
    from swamp.extensions.environment import distribution

    dist = distribution(target, name)
    if dist is None:
        return None
    return _inside(target, [ep.value for ep in dist.entry_points if ep.group == WORKFLOWS_GROUP])


def _inside(root: Path, values) -> Path | None:
    """The first declared folder that exists within ``root``: a value
    that climbs out of the package (``..``) names nothing."""
    base = root.resolve()
    for value in sorted(values):
        module = str(value).split(":", 1)[0].strip()
        folder = (root / module.replace(".", "/")).resolve()
        if folder.is_dir() and folder.is_relative_to(base):
            return folder
    return None
