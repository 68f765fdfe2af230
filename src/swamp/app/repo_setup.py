"""Making and refreshing a repository: `repo init`, `repo upgrade`, and the
instructions coding agents read (`agent setup|list|rm`). Each works on the
files of one repository root and needs no datastore session. The front
asks the person between a plan and its apply (a file they edited is kept
unless they agree)."""

from __future__ import annotations

from pathlib import Path

from swamp.repo import agent_removal, agents
from swamp.repo.init import agents_difference, init_repo, upgrade_repo

#: the agents swamp writes instructions for, by name
AGENTS = agents.AGENTS

__all__ = ["AGENTS", "agents_difference", "apply_agent_changes", "apply_agent_removal", "check_agent_names",
           "detect_agents", "init_repo", "list_agents", "plan_agent_changes", "plan_agent_removal",
           "plan_upgrade", "upgrade_repo"]

check_agent_names = agents.check_names
detect_agents = agents.detect
plan_agent_changes = agents.plan
apply_agent_changes = agents.apply
plan_agent_removal = agent_removal.plan
apply_agent_removal = agent_removal.apply


def plan_upgrade(root: Path) -> list:
    """The agent files `repo upgrade` refreshes: those swamp wrote here."""
    return agents.plan(root, agents.agents_present(root))


def list_agents(root: Path) -> list[dict]:
    """`agent list`: each agent, the file it reads, whether it was found
    here and whether swamp's part is in its file (sorted by name)."""
    found = set(agents.detect(root))
    present = set(agents.agents_present(root))
    rows = []
    for a in sorted(agents.AGENTS.values(), key=lambda a: a.name):
        path = a.path or "AGENTS.md"
        written = (a.name in present) if a.path else (root / "AGENTS.md").is_file()
        rows.append({"name": a.name, "title": a.title, "file": path, "detected": a.name in found,
                     "written": written})
    return rows
