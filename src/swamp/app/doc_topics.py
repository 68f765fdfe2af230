"""The documentation that travels with the package: ``swamp docs [TOPIC]``.

A wheel carries the project's ``docs/*.md`` as ``swamp/docs_pages/`` (hatch
force-include, pyproject.toml); a checkout (an editable install) reads
``docs/`` beside ``src/``. The AGENTS.md that ``swamp init`` writes is one
more topic, ``agents``.

A topic is named as a help text points at it: ``workers``, ``workers.md``,
``docs/workers.md``, with ``#section`` for one section (the heading's slug,
as the docs site makes it: ``serve#schedules``). A name is looked up among
the pages that exist, never joined onto a path: no name can reach a file
outside the pages.
"""

from __future__ import annotations

import re
from pathlib import Path

from swamp.errors import NotFoundError, ValidationError

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TOPIC = re.compile(r"^(?:docs/)?([a-z0-9][a-z0-9-]*)(?:\.md)?(?:#([a-z0-9_-]+))?$")


def pages_dir() -> Path | None:
    import swamp

    package = Path(swamp.__file__).resolve().parent
    for candidate in (package / "docs_pages", package.parents[1] / "docs"):
        if (candidate / "index.md").is_file():
            return candidate
    return None


def _pages() -> dict[str, Path]:
    import swamp

    found = {}
    where = pages_dir()
    if where is not None:
        found = {p.stem: p for p in where.glob("*.md") if _TOPIC.match(p.stem)}
    found["agents"] = Path(swamp.__file__).resolve().parent / "repo" / "AGENTS.md"
    return found


def _title(text: str, fallback: str) -> str:
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m and len(m.group(1)) == 1:
            return m.group(2)
    return fallback


def slug(heading: str) -> str:
    """A heading's anchor as the docs site (mkdocs' toc) makes it."""
    text = re.sub(r"[`*_]", "", heading).lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def _sections(text: str) -> list[tuple[str, int, int, int]]:
    """(slug, level, first line, end line) of every heading outside code blocks."""
    lines = text.splitlines()
    heads: list[tuple[str, int, int]] = []
    fenced = False
    for n, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            heads.append((slug(m.group(2)), len(m.group(1)), n))
    out = []
    for i, (name, level, start) in enumerate(heads):
        end = next((s for _, lv, s in heads[i + 1:] if lv <= level), len(lines))
        out.append((name, level, start, end))
    return out


def list_topics() -> list[dict]:
    """Every topic, sorted by name, with its page's title."""
    out = []
    for name, path in sorted(_pages().items()):
        text = path.read_text(encoding="utf-8")
        out.append({"topic": name, "title": _title(text, name)})
    return out


def parse_topic(spec: str) -> tuple[str, str | None]:
    m = _TOPIC.match(spec.strip().lower())
    if not m:
        raise ValidationError(f"'{spec}' is not a topic name", code="bad_topic",
                              hint="a topic is a word such as 'workflows', optionally with '#section'; "
                                   "'swamp docs' lists them")
    return m.group(1), m.group(2)


def show_topic(spec: str) -> dict:
    """{topic, section, title, text}: a whole page, or one section of it."""
    name, section = parse_topic(spec)
    pages = _pages()
    if name not in pages:
        raise NotFoundError(f"no documentation topic '{name}'",
                            hint=f"topics: {', '.join(sorted(pages))} ('swamp docs' lists them with titles)")
    text = pages[name].read_text(encoding="utf-8")
    if section is None:
        return {"topic": name, "section": None, "title": _title(text, name), "text": text}
    sections = _sections(text)
    for anchor, _level, start, end in sections:
        if anchor == section:
            lines = text.splitlines()
            return {"topic": name, "section": section, "title": _HEADING.match(lines[start]).group(2),
                    "text": "\n".join(lines[start:end]).rstrip() + "\n"}
    raise NotFoundError(f"the topic '{name}' has no section '{section}'",
                        hint=f"its sections: {', '.join(sorted({s[0] for s in sections}))}")
