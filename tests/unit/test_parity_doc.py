"""docs/parity.md's table of upstream commands stays true: a command it
calls "same" exists here under that name (hidden aliases count), one it
calls "another name" names a command that exists, and the counts above the
table are the table's. A command built since a row was written fails here
until the row says so; so does a row claiming a command that is not there."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import click

DOC = Path(__file__).resolve().parents[2] / "docs" / "parity.md"


def _rows() -> list[tuple[str, str]]:
    text = DOC.read_text()
    table = text[text.index("| upstream command | here |"):]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.startswith("| `"):
            break
        command, status = (cell.strip() for cell in line.strip("|").split("|", 1))
        rows.append((command.strip("`"), status))
    return rows


def _resolves(words: list[str]) -> bool:
    """Whether ``swamp WORDS`` names a command here: a group's command, a
    command's subcommand (swamp.cli.groups.CommandWithSubcommands), or a
    value its first argument names in its choices or its metavar (`doctor
    audit`)."""
    from swamp.cli.main import cli

    ctx = click.Context(cli)
    command: click.Command = cli
    for word in words:
        if isinstance(command, click.Group):
            command = command.get_command(ctx, word)
        elif word in getattr(command, "subcommands", {}):
            command = command.subcommands[word]
        else:
            first = next((p for p in command.params if isinstance(p, click.Argument)), None)
            if first is None:
                return False
            named = first.type.choices if isinstance(first.type, click.Choice) else \
                re.findall(r"[a-z][a-z-]*", first.metavar or "")  # `[datastores|...]...|audit`
            return word in named
        if command is None:
            return False
    return True


def _option_exists(name: str) -> bool:
    from swamp.cli.main import cli

    return name in ("--help", "-h") or any(name in p.opts for p in cli.params)


def test_every_command_called_the_same_exists_here():
    absent = [c for c, status in _rows() if status.startswith("same") and not _resolves(c.split())]
    assert not absent, f"docs/parity.md calls these 'same' but swamp has no such command: {absent}"


def test_every_other_name_given_exists_here():
    wrong = []
    for command, status in _rows():
        if status.startswith("another name"):
            named = re.search(r"`([^`]+)`", status)
            words = named.group(1).split() if named else []
            if words[:1] == ["swamp"]:
                words = words[1:]
            if words and words[0].startswith("-"):  # an option, such as `--help` or `swamp --version`
                if not _option_exists(words[0]):
                    wrong.append(command)
                continue
            words = [w for w in words if not w.startswith("-") and "|" not in w][:3]
            # `datastore setup filesystem|s3|gcs`: the group part must exist
            while words and not _resolves(words):
                words = words[:-1]
            if not words:
                wrong.append(command)
    assert not wrong, f"docs/parity.md gives another name for these that swamp does not have: {wrong}"


def test_the_counts_are_the_tables():
    text = DOC.read_text()
    counted = Counter()
    for _, status in _rows():
        # "another meaning" (`report list`) is counted with the other names
        key = next((k for k in ("same", "another", "n/a", "missing") if status.startswith(k)), status)
        counted[key] += 1
    said = dict(re.findall(r"^\| (same|another name|not applicable|missing|total) \| (\d+) \|$", text, re.M))
    assert int(said["same"]) == counted["same"]
    assert int(said["another name"]) == counted["another"]
    assert int(said["not applicable"]) == counted["n/a"]
    assert int(said["missing"]) == counted["missing"]
    assert int(said["total"]) == sum(counted.values())


def test_no_command_that_exists_is_called_missing():
    built = [c for c, status in _rows() if status.startswith("missing") and _resolves(c.split())]
    assert not built, f"docs/parity.md calls these missing but swamp has them: {built}"
