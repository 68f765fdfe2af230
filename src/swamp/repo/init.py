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


def init_repo(path: str | Path, *, force: bool = False) -> dict:
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
    if force or not agents.exists():
        atomic_write(agents, resources.files("swamp.repo").joinpath("AGENTS.md").read_text())
        created.append("AGENTS.md")
    return {"path": str(root), "created": sorted(set(created))}


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
