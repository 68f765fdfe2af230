"""`swamp repo init` and `swamp repo upgrade`: the marker, the directory
layout, a managed .gitignore block and AGENTS.md (its managed region:
swamp/repo/agents.py)."""

from __future__ import annotations

from pathlib import Path

from swamp import __version__
from swamp.errors import SwampError
from swamp.repo import agents
from swamp.repo.config import RepoConfig
from swamp.repo.context import MARKER
from swamp.repo.swamp_version import refuse_newer
from swamp.util import clock, yamlio
from swamp.util.atomic import atomic_write
from swamp.util.ids import new_id

DIRS = ["models", "workflows", "vaults", "extensions/models", ".swamp"]
GITIGNORE_BEGIN = "# >>> swamp managed >>>"
GITIGNORE_END = "# <<< swamp managed <<<"
GITIGNORE_BODY = """# runtime state, secrets and caches never go to git
.swamp/
"""


def _agents_change(root: Path):
    """What ``init --force`` would do to AGENTS.md: like ``agent setup``,
    except that consent replaces the file (it never appends)."""
    change = agents.plan_file(root, "AGENTS.md", None)
    if change.action == "ask":
        change.new, change.how = agents.region(agents.shipped_agents()), "replace"
    return change


def agents_difference(path: str | Path) -> str | None:
    """How the repository's AGENTS.md differs from the one this swamp would
    write (a unified diff), or None when it is missing, the same, or swamp's
    own unedited text (which --force refreshes without asking)."""
    root = Path(path).absolute()
    if not (root / "AGENTS.md").is_file():
        return None
    change = _agents_change(root)
    return change.diff() if change.action == "ask" else None


def init_repo(path: str | Path, *, force: bool = False, replace_agents: bool = False) -> dict:
    """Create (or, with ``force``, rewrite the managed files of) a
    repository. An AGENTS.md that differs from swamp's is replaced only
    with ``replace_agents``: it may hold the user's own edits."""
    root = Path(path).absolute()
    marker = root / MARKER
    if marker.exists() and not force:
        raise SwampError(f"{root} is already a swamp repository", code="exists",
                         hint="pass --force to rewrite the managed files")
    created: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for d in DIRS:
        p = root / d
        if not p.exists():
            p.mkdir(parents=True)
            created.append(d + "/")
    if marker.exists():
        config = RepoConfig.model_validate(yamlio.load(marker))
    else:
        config = RepoConfig(swampVersion=__version__, initializedAt=clock.isoformat(), repoId=new_id())
        created.append(MARKER)
    atomic_write(marker, yamlio.dumps(config.model_dump(exclude_none=True)))
    if _write_gitignore(root / ".gitignore"):
        created.append(".gitignore")
    kept = []
    if not (root / "AGENTS.md").exists() or force:
        change = _agents_change(root)
        if change.action in ("create", "update") or (change.action == "ask" and replace_agents):
            atomic_write(root / "AGENTS.md", change.new)
            created.append("AGENTS.md")
        elif change.action == "ask":
            kept.append("AGENTS.md")
    return {"path": str(root), "created": sorted(set(created)), "kept": kept}


def upgrade_repo(path: str | Path, changes: list, consent: set[str]) -> dict:
    """`swamp repo upgrade`: bring a repository made by an older swamp up to
    this one (the directory layout, the managed .gitignore block, the
    version in .swamp.yaml) and write the agents' files ``changes`` planned
    (swamp.repo.agents.plan), those to ask about only when in ``consent``."""
    root = Path(path).absolute()
    marker = root / MARKER
    if not marker.is_file():
        raise SwampError(f"{root} is not a swamp repository", code="repo_not_found",
                         hint=f"create one with 'swamp repo init {path}'")
    migrated: list[str] = []
    for d in DIRS:
        if not (root / d).exists():
            (root / d).mkdir(parents=True)
            migrated.append(f"created {d}/")
    if _write_gitignore(root / ".gitignore"):
        migrated.append("updated the swamp block of .gitignore")
    config = RepoConfig.model_validate(yamlio.load(marker))
    before = config.swampVersion

    refuse_newer(before, str(marker))  # never write an older version over a newer one
    if before != __version__:
        config = config.model_copy(update={"swampVersion": __version__})
        atomic_write(marker, yamlio.dumps(config.model_dump(exclude_none=True)))
        migrated.append(f"{MARKER}: swampVersion {before} -> {__version__}")
    files = agents.apply(root, changes, consent)
    return {"path": str(root), "swampVersion": {"from": before, "to": __version__}, "migrated": migrated,
            **files, "files": [c.to_json() for c in changes]}


def _write_gitignore(path: Path) -> bool:
    block = f"{GITIGNORE_BEGIN}\n{GITIGNORE_BODY}{GITIGNORE_END}\n"
    text = path.read_text() if path.exists() else ""
    if GITIGNORE_BEGIN in text and GITIGNORE_END in text:
        start = text.index(GITIGNORE_BEGIN)
        end = text.index(GITIGNORE_END) + len(GITIGNORE_END)
        new = text[:start] + block.rstrip("\n") + text[end:]
    else:
        new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block
    if new == text:
        return False
    atomic_write(path, new)
    return True
