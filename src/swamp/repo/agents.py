"""Instructions for the coding agents a user has: AGENTS.md (the whole of
swamp's instructions) and, for the agents that read a file of their own
(Claude Code, Cursor, GitHub Copilot, Gemini CLI, Windsurf), a short file
pointing at it.

Each file holds swamp's text in a *managed region* whose first line carries
the hash of the text swamp wrote:

    <!-- swamp:begin sha256=0123456789abcdef (written by swamp; ...) -->
    ...
    <!-- swamp:end -->

So a later ``swamp repo upgrade`` (or ``agent setup``) knows, without any
other record, whether the user edited it: an unedited region is refreshed
in place, an edited one is changed only with the user's consent. What the
user wrote outside the region is never touched. A file swamp did not write
(the user's own CLAUDE.md) gets the region appended, with consent too.
AGENTS.md files written before regions existed are recognised by the
hashes of the texts swamp shipped then."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from swamp.errors import SwampError
from swamp.util.atomic import atomic_write
from swamp.util.names import did_you_mean

BEGIN = "<!-- swamp:begin"
END = "<!-- swamp:end -->"
_BEGIN_RE = re.compile(r"<!-- swamp:begin sha256=([0-9a-f]{16})[^\n]*-->\n")
_NOTE = "written by swamp; 'swamp repo upgrade' refreshes this part unless you edit it"

#: sha256 of each AGENTS.md swamp shipped before managed regions (written whole, unmarked)
LEGACY_AGENTS = frozenset({
    "6e809d9c2aaaac392b9ad03af4217603c31de96275a39a8d99caa451074871ac",
    "d21b50c58cae10f61e9a579f57ebc5005fd704051a44d918462d40287d1d03c4",
    "e676ac1ce7834cba301c5e13d18473e68df50db9809e81d9923c48f3d5fb0d2f",
    "c116b37393b1910fc2dd82cef0faa1b455ee19d9578b4523dd6e2e372393dfeb",
    "f8efd50b317078307ab6770bfea7068b2f30659a2b071ebd4bfccee3e53b079c",
})
#: the heading of swamp's AGENTS.md: an unmarked file with it is an edited copy of swamp's
AGENTS_HEADING = "# Working in a swamp repository"

POINTER = ("This is a swamp repository. Before working here, read `AGENTS.md` at the\n"
           "repository root: the layout, the rules for agents (always `--json`, never a\n"
           "secret in a file) and the commands.\n")


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    #: the file it reads besides AGENTS.md (None: AGENTS.md itself)
    path: str | None
    #: text before the managed region in a new file (a rules file's front matter)
    header: str = ""
    #: "@AGENTS.md": the agent imports the file named so
    imports: bool = False
    #: what says the user has it: paths in the repository, commands on PATH, paths in $HOME
    in_repo: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    in_home: tuple[str, ...] = ()


AGENTS: dict[str, Agent] = {a.name: a for a in (
    Agent("agents", "AGENTS.md (read by Codex, Jules, Aider, Zed, opencode and others)", None),
    Agent("claude", "Claude Code", "CLAUDE.md", imports=True,
          in_repo=("CLAUDE.md", ".claude"), commands=("claude",), in_home=(".claude",)),
    Agent("codex", "OpenAI Codex", None, commands=("codex",), in_home=(".codex",)),
    Agent("copilot", "GitHub Copilot", ".github/copilot-instructions.md",
          in_repo=(".github/copilot-instructions.md",), commands=("copilot",),
          in_home=(".config/github-copilot", ".copilot")),
    Agent("cursor", "Cursor", ".cursor/rules/swamp.mdc",
          header="---\ndescription: How to work in this swamp repository\nalwaysApply: true\n---\n",
          in_repo=(".cursor",), commands=("cursor", "cursor-agent"), in_home=(".cursor",)),
    Agent("gemini", "Gemini CLI", "GEMINI.md", imports=True,
          in_repo=("GEMINI.md", ".gemini"), commands=("gemini",), in_home=(".gemini",)),
    Agent("windsurf", "Windsurf", ".windsurf/rules/swamp.md",
          in_repo=(".windsurf", ".windsurfrules"), commands=("windsurf",), in_home=(".codeium/windsurf",)),
)}


def check_names(names) -> list[str]:
    """The agents named (``all`` for every one), sorted; an unknown name is an error."""
    out: set[str] = set()
    for n in names:
        n = n.strip().lower()
        if n == "all":
            out.update(AGENTS)
        elif n in AGENTS:
            out.add(n)
        else:
            raise SwampError(f"unknown agent {n!r}", code="usage",
                             hint=did_you_mean(n, list(AGENTS) + ["all"])
                             or f"known agents: {', '.join(sorted(AGENTS))}, or all")
    return sorted(out)


def detect(root: Path, environ=os.environ) -> list[str]:
    """The agents this user seems to have: their files in the repository,
    their command on PATH, or their directory in the home directory."""
    home = Path(environ.get("HOME") or "~").expanduser()
    path = environ.get("PATH", "")
    found = []
    for a in AGENTS.values():
        if (any((root / p).exists() for p in a.in_repo)
                or any(shutil.which(c, path=path) for c in a.commands)
                or any((home / p).exists() for p in a.in_home)):
            found.append(a.name)
    return sorted(found)


def agents_present(root: Path) -> list[str]:
    """The agents whose file swamp wrote in this repository (what ``repo
    upgrade`` refreshes)."""
    out = []
    for a in AGENTS.values():
        if a.path is not None:
            p = root / a.path
            if p.is_file() and BEGIN in p.read_text(errors="replace"):
                out.append(a.name)
    return sorted(out)


# ------------------------------------------------------------- the regions
def _hash(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def region(body: str) -> str:
    return f"{BEGIN} sha256={_hash(body)} ({_NOTE}) -->\n{body}{END}\n"


def shipped_agents() -> str:
    return resources.files("swamp.repo").joinpath("AGENTS.md").read_text()


def _body(agent: Agent | None) -> str:
    if agent is None or agent.path is None:
        return shipped_agents()
    return POINTER + ("\n@AGENTS.md\n" if agent.imports else "")


def _find_region(text: str) -> tuple[int, int, str, str] | None:
    """(start, end, recorded hash, body) of the managed region, or None."""
    m = _BEGIN_RE.search(text)
    if m is None:
        return None
    end = text.find(END, m.end())
    if end < 0:
        return None
    stop = end + len(END)
    if text[stop:stop + 1] == "\n":
        stop += 1
    return m.start(), stop, m.group(1), text[m.end():end]


@dataclass
class Change:
    """What setting up one file would do. ``action``: create, unchanged,
    update (swamp's text, unedited: refreshed), or ask (the user edited
    swamp's region, or the file is theirs): only with consent."""

    path: str
    agents: list[str]
    action: str
    old: str | None
    new: str
    #: for ask: what consent does ("replace" swamp's region or copy, "append" to the user's file)
    how: str = ""

    def diff(self) -> str:
        import difflib

        return "".join(difflib.unified_diff((self.old or "").splitlines(keepends=True),
                                            self.new.splitlines(keepends=True),
                                            f"{self.path} (yours)", f"{self.path} (swamp's)"))

    def to_json(self) -> dict:
        out = {"path": self.path, "agents": self.agents, "action": self.action}
        if self.how:
            out["how"] = self.how
        return out


def plan_file(root: Path, rel: str, agent: Agent | None) -> Change:
    body = _body(agent)
    p = root / rel
    names = [agent.name] if agent is not None else []
    if not p.exists():
        return Change(rel, names, "create", None, (agent.header if agent else "") + region(body))
    if not p.is_file():
        raise SwampError(f"{rel} is not a file", code="not_a_file", hint=f"move {rel} away and run it again")
    old = p.read_text(errors="replace")
    found = _find_region(old)
    if found is not None:
        start, stop, recorded, current = found
        new = old[:start] + region(body) + old[stop:]
        if current == body and recorded == _hash(body):
            return Change(rel, names, "unchanged", old, old)
        if recorded == _hash(current):  # swamp's own text, unedited: an older version
            return Change(rel, names, "update", old, new)
        return Change(rel, names, "ask", old, new, how="replace")
    if agent is None or agent.path is None:  # AGENTS.md without a region
        if hashlib.sha256(old.encode()).hexdigest() in LEGACY_AGENTS:
            return Change(rel, names, "update", old, region(body))
        if old.lstrip().startswith(AGENTS_HEADING):
            return Change(rel, names, "ask", old, region(body), how="replace")
    return Change(rel, names, "ask", old, old.rstrip("\n") + "\n\n" + region(body), how="append")


def plan(root: str | Path, agents: list[str]) -> list[Change]:
    """What writing the files of ``agents`` would change, by path. AGENTS.md
    always: the other files point at it."""
    root = Path(root).absolute()
    changes = {"AGENTS.md": plan_file(root, "AGENTS.md", None)}
    changes["AGENTS.md"].agents = sorted(n for n in agents if AGENTS[n].path is None) or ["agents"]
    for n in agents:
        a = AGENTS[n]
        if a.path is not None:
            changes[a.path] = plan_file(root, a.path, a)
    return [changes[k] for k in sorted(changes)]


def apply(root: str | Path, changes: list[Change], consent: set[str]) -> dict:
    """Write the changes; one to ask about only when its path is in
    ``consent``. Returns {created, updated, unchanged, kept} (paths, sorted)
    and the agents' entries."""
    root = Path(root).absolute()
    out: dict[str, list] = {"created": [], "updated": [], "unchanged": [], "kept": []}
    for c in changes:
        if c.action == "unchanged":
            out["unchanged"].append(c.path)
            continue
        if c.action == "ask" and c.path not in consent:
            out["kept"].append(c.path)
            continue
        p = root / c.path
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, c.new)
        out["created" if c.action == "create" else "updated"].append(c.path)
    return {k: sorted(v) for k, v in out.items()}
