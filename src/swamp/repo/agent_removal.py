"""`swamp agent rm NAME`: take swamp's part out of one agent's own file
(CLAUDE.md, .cursor/rules/swamp.mdc, ...), the reverse of `agent setup`.

Only the managed region goes; what the user wrote around it stays. A file
left holding nothing else (swamp created it: the region and, for a rules
file, the header it wrote first) is deleted. A region the user edited is
removed only with consent, since their edit would go with it. AGENTS.md
is not removed this way: the other agents' files point at it."""

from __future__ import annotations

from pathlib import Path

from swamp.errors import UsageError
from swamp.repo.agents import AGENTS, _find_region, _hash, check_names
from swamp.util.atomic import atomic_write


def plan(root: Path, name: str) -> dict:
    """What removing ``name`` would do: action absent (no region), delete
    (the file holds nothing else), strip (the rest stays), or ask (the
    region was edited), with the text the file would keep."""
    [n] = check_names([name]) if name != "all" else [None]
    agent = AGENTS[n] if n else None
    if agent is None or agent.path is None:
        raise UsageError(f"'agent rm' takes one agent with a file of its own, not {name!r}",
                         hint="AGENTS.md is what the other agents' files point at: edit or delete it by hand; "
                              "agents with a file: " + ", ".join(sorted(a.name for a in AGENTS.values() if a.path)))
    p = root / agent.path
    out = {"name": agent.name, "path": agent.path}
    text = p.read_text(errors="replace") if p.is_file() else None
    found = _find_region(text) if text is not None else None
    if found is None:
        return {**out, "action": "absent", "keep": text}
    start, stop, recorded, body = found
    rest = (text[:start] + text[stop:]).strip("\n")
    deleted = rest == "" or rest + "\n" == agent.header
    action = "delete" if deleted else "strip"
    if recorded != _hash(body):
        return {**out, "action": "ask", "then": action, "keep": None if deleted else rest + "\n"}
    return {**out, "action": action, "keep": None if deleted else rest + "\n"}


def apply(root: Path, change: dict, consent: bool) -> dict:
    """Carry out a plan; one to ask about only with ``consent``. Returns
    the plan's name and path with what was done: deleted, stripped, kept
    (edited, no consent) or absent."""
    action = change["action"]
    if action == "ask":
        if not consent:
            return _done(change, "kept")
        action = change["then"]
    p = root / change["path"]
    if action == "delete":
        p.unlink()
        return _done(change, "deleted")
    if action == "strip":
        atomic_write(p, change["keep"])
        return _done(change, "stripped")
    return _done(change, "absent")


def _done(change: dict, what: str) -> dict:
    return {"name": change["name"], "path": change["path"], "result": what}
