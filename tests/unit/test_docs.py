"""The project's own documentation: README.md and docs/.

- docs/cli.md is what the generator prints from today's commands;
- nothing in the project points into the design notes beside the checkout
  (a user's clone has none);
- every relative link in README.md and docs/*.md reaches a file, and every
  in-page anchor a heading;
- the docs site builds with ``mkdocs build --strict``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# Spelt in two pieces so that this file does not match itself.
OUTSIDE = "../" + "shared"
#: folders that are not the project's files (tools' caches, build output)
NOT_PROJECT = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache",
               ".ruff_cache", "site", "build", "dist"}

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _links(text: str) -> list[str]:
    """Link targets outside code blocks and code spans."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    return [a or b for a, b in _LINK.findall(text)]


def _slug(heading: str) -> str:
    """The anchor GitHub and mkdocs give a heading (for the headings we write:
    lower case, punctuation dropped, spaces to hyphens)."""
    text = re.sub(r"`|\*|_(?=\w)|(?<=\w)_", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def test_cli_reference_is_current():
    from swamp.cli.reference import REGENERATE, render

    current = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert render() == current, (
        f"docs/cli.md is out of date with the click commands; regenerate it with `{REGENERATE}` "
        "(from the project root) and commit it")


def test_cli_reference_names_every_command():
    import click

    from swamp.cli.main import cli

    text = (DOCS / "cli.md").read_text(encoding="utf-8")

    def walk(group: click.Group, ctx: click.Context) -> list[str]:
        out = []
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if cmd.hidden:  # an upstream alias (cli/aliases.py), documented as its command
                continue
            sub = click.Context(cmd, info_name=name, parent=ctx)
            out.append(sub.command_path)
            if isinstance(cmd, click.Group):
                out += walk(cmd, sub)
        return out

    paths = walk(cli, click.Context(cli, info_name="swamp"))
    assert "swamp datastore sync" in paths
    missing = [p for p in paths if not re.search(rf"^#+ {re.escape(p)}$", text, re.M)]
    assert not missing, f"commands without a section in docs/cli.md: {missing}"


def test_nothing_points_outside_the_checkout():
    offenders = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in NOT_PROJECT and not d.endswith(".egg-info")]
        for name in filenames:
            path = Path(dirpath, name)
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if OUTSIDE.encode() in data:
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, (
        f"these files refer to {OUTSIDE}/..., which a user's clone does not have; "
        f"point into docs/ instead: {sorted(offenders)}")


def test_relative_links_reach_files_and_headings():
    broken = []
    for md in _markdown_files():
        for target in _links(md.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            where, _, anchor = target.partition("#")
            dest = (md.parent / where).resolve() if where else md
            rel = md.relative_to(ROOT)
            if not dest.exists():
                broken.append(f"{rel}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{rel}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_docs_never_link_outside_docs():
    # The site is built from docs/ alone: a link out of it breaks there.
    out = []
    for md in sorted(DOCS.rglob("*.md")):
        for target in _links(md.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            dest = (md.parent / target.partition("#")[0]).resolve()
            if DOCS.resolve() not in dest.parents:
                out.append(f"{md.relative_to(ROOT)}: {target}")
    assert not out, "links from docs/ to outside docs/ (name the file in `code` instead):\n" + "\n".join(out)


def test_readme_keeps_its_first_commands():
    head = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:6]
    assert head[0] == "# swamp"
    assert any(line.startswith("bash scripts/demo.sh") for line in head)
    assert any(line.startswith("bash scripts/test.sh") for line in head)


def test_docs_site_builds_strict(tmp_path):
    for module, package in (("mkdocs", "mkdocs"), ("material", "mkdocs-material")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{package} is not installed (it comes with the 'test' extra: pip install -e '.[test]')")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "cli" / "index.html").is_file()


def test_tests_named_in_the_docs_exist():
    # The sync page names the tests that show each invariant; a test renamed
    # or moved must not leave the page pointing at nothing.
    defined = set()
    for path in (ROOT / "tests").rglob("*.py"):
        defined.update(re.findall(r"^\s*def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    missing = []
    for md in sorted(DOCS.rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        for rel in sorted(set(re.findall(r"\btests/[\w/]+\.py\b", text))):
            if not (ROOT / rel).is_file():
                missing.append(f"{md.name}: {rel}")
        for name in sorted(set(re.findall(r"\b(test_\w+)\b", text)) - defined):
            if not (ROOT / "tests" / "unit" / f"{name}.py").exists() and not list(ROOT.glob(f"tests/**/{name}.py")):
                missing.append(f"{md.name}: {name}")
    assert not missing, "tests named in docs/ that do not exist:\n" + "\n".join(missing)


def test_the_reference_shows_usage_defaults_and_choices_and_escapes_help():
    import click

    from swamp.cli.reference import render

    @click.group()
    def root():
        """Root."""

    @root.group("zeta")
    def zeta():
        """Zeta things."""

    @zeta.command("run")
    @click.argument("name")
    @click.option("--mode", type=click.Choice(["a", "b"]), default="a", help="How to run.")
    @click.option("--limit", type=int, default=20, help="At most this many <items> | rows.")
    @click.option("--token", required=True, help="Needed.")
    @click.option("--secret", hidden=True)
    def run(name, mode, limit, token, secret):
        """Run NAME under *model/<type>/<id>*."""

    @root.command("alpha")
    def alpha():
        """Alpha."""

    text = render(root)
    assert text.index("## swamp alpha") < text.index("## swamp zeta") < text.index("### swamp zeta run")
    assert "```text\nswamp zeta run [OPTIONS] NAME\n```" in text
    assert "| `--mode CHOICE` | `a` | How to run. (one of `a`, `b`) |" in text
    assert "| `--limit INTEGER` | `20` | At most this many &lt;items&gt; \\| rows. |" in text
    assert "| `--token TEXT` |  | Needed. (required) |" in text
    assert "--secret" not in text
    assert "Run NAME under \\*model/&lt;type&gt;/&lt;id&gt;\\*." in text


def test_every_page_is_in_the_site_navigation_and_the_map():
    # A page added to docs/ but not to mkdocs.yml's nav builds, yet no
    # reader of the site finds it; docs/index.md is the map of the pages.
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r"^\s*-\s*[^:\n]+:\s*(\S+\.md)\s*$", config, re.M))
    index = set(_links((DOCS / "index.md").read_text(encoding="utf-8")))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - nav == set(), f"pages missing from the nav in mkdocs.yml: {sorted(pages - nav)}"
    unmapped = {p for p in pages - {"index.md"} if p not in index}
    assert not unmapped, f"pages missing from the map in docs/index.md: {sorted(unmapped)}"
