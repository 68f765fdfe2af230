"""`swamp repo init`: the marker, the directory layout, a managed
.gitignore block and AGENTS.md."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from swamp import __version__
from swamp.errors import SwampError
from swamp.repo.context import MARKER
from swamp.util import clock
from swamp.util.atomic import atomic_write
from swamp.util.ids import new_id

DIRS = ["models", "workflows", "vaults", "extensions/models", ".swamp"]
GITIGNORE_BEGIN = "# >>> swamp managed >>>"
GITIGNORE_END = "# <<< swamp managed <<<"
GITIGNORE_BODY = """# runtime state, secrets and caches never go to git
.swamp/
"""


def agents_difference(path: str | Path) -> str | None:
    """How the repository's AGENTS.md differs from the one this swamp ships
    (a unified diff), or None when it is missing or the same."""
    import difflib

    current = Path(path).absolute() / "AGENTS.md"
    if not current.exists():
        return None
    mine, shipped = current.read_text(), _shipped_agents()
    if mine == shipped:
        return None
    return "".join(difflib.unified_diff(mine.splitlines(keepends=True), shipped.splitlines(keepends=True),
                                        "AGENTS.md (yours)", "AGENTS.md (swamp's)"))


def _shipped_agents() -> str:
    return resources.files("swamp.repo").joinpath("AGENTS.md").read_text()


def init_repo(path: str | Path, *, force: bool = False, replace_agents: bool = False) -> dict:
    """Create (or, with ``force``, rewrite the managed files of) a
    repository. An AGENTS.md that differs from swamp's is replaced only
    with ``replace_agents``: it may hold the user's own edits."""
    from swamp.repo.config import RepoConfig
    from swamp.util import yamlio

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
    agents = root / "AGENTS.md"
    kept = []
    if not agents.exists() or (force and replace_agents):
        atomic_write(agents, _shipped_agents())
        created.append("AGENTS.md")
    elif force and agents_difference(root) is not None:
        kept.append("AGENTS.md")
    return {"path": str(root), "created": sorted(set(created)), "kept": kept}


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
