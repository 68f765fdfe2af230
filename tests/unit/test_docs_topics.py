"""`swamp docs [TOPIC]`: the docs travel with the package, and every help
text's pointer to them names a topic that `swamp docs` shows."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile

import click
import pytest

from tests.helpers import REPO_ROOT, invoke

POINTER = re.compile(r"swamp docs ([a-z0-9][a-z0-9#_-]*)")
RAW_PATH = re.compile(r"\bdocs/[\w-]+\.md")


def _all_help() -> list[tuple[str, str]]:
    """(command path, its --help text) for every command and group."""
    from swamp.cli.main import GROUPS, cli

    out = []

    def walk(cmd: click.Command, path: list[str], parent: click.Context | None) -> None:
        ctx = click.Context(cmd, info_name=path[-1], parent=parent)
        out.append((" ".join(path), cmd.get_help(ctx)))
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, path + [name], ctx)

    walk(cli, ["swamp"], None)
    assert len(out) > len(GROUPS)
    return out


def test_every_help_pointer_names_a_topic_that_swamp_docs_shows():
    from swamp.app.doc_topics import show_topic

    pointers, raw = [], []
    for path, text in _all_help():
        flat = " ".join(text.split())  # click wraps lines, a pointer may be cut in two
        pointers += [(path, p.rstrip(".,;:)")) for p in POINTER.findall(flat)]
        raw += [(path, m) for m in RAW_PATH.findall(flat)]
    assert not raw, f"help texts that point at a file an installed swamp lacks; write 'swamp docs TOPIC': {raw}"
    assert len(pointers) >= 5, pointers
    for path, topic in pointers:
        page = show_topic(topic)
        assert page["text"].strip(), (path, topic)


def test_docs_lists_the_topics_sorted_and_shows_one_and_its_section():
    listed = invoke(None, "docs").data
    names = [t["topic"] for t in listed]
    assert names == sorted(names) and {"workflows", "serve", "agents", "sync"} <= set(names)
    page = invoke(None, "docs", "workflows").data
    assert page["title"] == "Workflows" and page["text"].startswith("# Workflows")
    section = invoke(None, "docs", "docs/serve.md#schedules").data
    assert section["text"].startswith("## Schedules") and "## Webhooks" not in section["text"]
    human = invoke(None, "docs", "sync#timeouts", json=False)
    assert human.code == 0 and "networkTimeout" in human.stdout


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "docs/../README", "nope", "serve#nope",
                                  "sync\x00", "a b"])
def test_a_name_that_is_no_topic_is_refused_without_reading_any_file(name):
    result = invoke(None, "docs", name)
    assert result.code != 0
    assert result.error["code"] in ("not_found", "bad_topic")
    assert "root:" not in result.stdout + result.stderr


def test_the_wheel_carries_the_docs_and_swamp_docs_reads_them_there(tmp_path):
    """Built as a user's pip would build it, unpacked with no checkout
    beside it: `swamp docs` still shows every page."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path / "dist")],
                   cwd=REPO_ROOT, check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    installed = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(installed)
    pages = sorted(p.name for p in (installed / "swamp" / "docs_pages").glob("*.md"))
    assert pages == sorted(p.name for p in (REPO_ROOT / "docs").glob("*.md"))
    shown = subprocess.run([sys.executable, "-c", "import sys; from swamp.cli.main import main; main(sys.argv[1:])",
                            "docs", "workers#enrolling-the-teams-certificates", "--json"], cwd=tmp_path, capture_output=True, text=True,
                           env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr
    import json

    doc = json.loads(shown.stdout)
    assert doc["topic"] == "workers" and doc["text"].lstrip("#").strip()
    assert str(installed) in subprocess.run(
        [sys.executable, "-c", "from swamp.app.doc_topics import pages_dir; print(pages_dir())"],
        capture_output=True, text=True, env={"PYTHONPATH": str(installed)}).stdout
