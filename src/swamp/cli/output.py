"""Rendering: one JSON document in --json mode, tables and lines otherwise.
Every string that leaves the process passes the secret redactor."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Sequence

from swamp.cli.echo import echo
from swamp.cli.state import CliState


def to_json(data: Any) -> str:
    from swamp.vault.redact import redact_text

    return redact_text(json.dumps(data, indent=2, sort_keys=False, default=str))


def emit(state: CliState, data: Any, human: Callable[[], None] | str | None = None) -> None:
    if state.json:
        echo(to_json(data))
        return
    if state.quiet:
        return
    if callable(human):
        human()
    elif isinstance(human, str):
        say(human)
    else:
        echo(to_json(data))


def say(text: str, *, err: bool = False) -> None:
    """One message for a person: redacted, and on a terminal its
    ``error:``/``warning:``/``hint:`` label and run states coloured."""
    from swamp.cli import colour
    from swamp.vault.redact import redact_text

    text = redact_text(text)
    echo(colour.line(text, colour.enabled(sys.stderr if err else sys.stdout)), err=err)


def say_diff(text: str) -> None:
    """A unified diff for a person (added lines green, removed red on a terminal)."""
    from swamp.cli import colour
    from swamp.vault.redact import redact_text

    echo(colour.diff(redact_text(text.rstrip("\n")), colour.enabled(sys.stdout)))


def human_size(n: int | float | None) -> str:
    """Bytes as a person reads them, in one style everywhere: ``512 B``,
    ``1.5 KiB``, ``20.0 MiB``, ``3.2 GiB`` (powers of 1024)."""
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns


#: columns whose values are states (painted by meaning on a terminal)
STATUS_COLUMNS = frozenset({"status", "state", "result", "valid", "outcome", "runStatus"})
#: columns whose values are byte counts (shown with human_size)
SIZE_COLUMNS = frozenset({"size", "bytes"})


def table(rows: Sequence[dict], columns: Sequence[str], headers: Sequence[str] | None = None) -> None:
    """Rows aligned in columns; on a terminal, state columns are coloured
    (each cell padded first, so colour never breaks the alignment)."""
    from swamp.cli import colour
    from swamp.vault.redact import redact_text

    on = colour.enabled(sys.stdout)
    headers = list(headers or [c.upper() for c in columns])
    cells = [[human_size(r.get(c)) if c in SIZE_COLUMNS and isinstance(r.get(c), (int, float))
              and not isinstance(r.get(c), bool) else _cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    painted = [c in STATUS_COLUMNS for c in columns]
    echo(redact_text("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()))
    for row in cells:
        line = []
        for i, (v, w) in enumerate(zip(row, widths)):
            cell = v.ljust(w) if i < len(row) - 1 else v
            if painted[i] and on:
                cell = colour.paint(v, colour.status_role(v)) + cell[len(v):]
            line.append(cell)
        echo(redact_text("  ".join(line).rstrip()))


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def confirm(state: CliState, yes: bool, question: str) -> None:
    """Deletes need -y without a terminal; with one, ask."""
    if yes:
        return
    if state.json or not sys.stdin.isatty():
        from swamp.errors import UsageError

        raise UsageError(f"{question} (pass -y to confirm)")
    import click

    click.confirm(question, abort=True)


def emit_validation(state: CliState, result: dict, items: str) -> None:
    """A validation report ({"valid", items: [{"name", "valid", "errors"}]});
    exits 1 when anything is invalid (the report is still printed)."""

    from swamp.cli import colour

    def human():
        on = colour.enabled(sys.stdout)
        for entry in result[items]:
            mark = colour.paint("ok", "good", on) + "     " if entry["valid"] else colour.paint("INVALID", "bad", on)
            say(f"{mark} {entry['name']}")
            for e in entry["errors"]:
                say(f"        {e}")
            for w in entry.get("warnings", []):
                say(f"        warning: {w}")

    emit(state, result, human)
    if not result["valid"]:
        sys.exit(1)


#: lines of a failed run's log shown without -v
FAILURE_TAIL = 5


def show_failure_log(state: CliState, log: str, command: str) -> None:
    """Where a failed run went wrong: the last lines of its log (all of it,
    the traceback included, with -v) and the command that shows the rest."""
    lines = log.rstrip("\n").splitlines()
    shown = lines if state.verbose else lines[-FAILURE_TAIL:]
    if shown:
        say("  log" + ("" if len(shown) == len(lines) else f" (last {len(shown)} of {len(lines)} lines; -v for all)")
            + ":")
        for line in shown:
            say(f"    {line}")
    say(f"  full log: {command}")


def open_in_editor(state: CliState, path, kind: str, name: str, *, managed: bool = False) -> None:
    """``swamp KIND edit NAME``: open ``path`` in $EDITOR (a terminal is
    needed; without one, say how to do it by hand; ``managed``: the file is
    in the datastore's config tier, which a hand edit must publish; the
    editor then gets a private copy, so a pull meanwhile never lands under
    it: app/managed_config.edit_privately)."""
    if state.json or not sys.stdin.isatty():
        from swamp.errors import UsageError

        publish = " and 'swamp datastore config publish'" if managed else ""
        raise UsageError(f"{kind} edit needs a terminal",
                         hint=f"edit {path} with any editor, then run 'swamp {kind} validate {name}'{publish}")
    import click

    if managed:
        from swamp.app.managed_config import edit_privately

        edit_privately(state.repo(), path, lambda copy: click.edit(filename=str(copy)))
        return
    click.edit(filename=str(path))


def summary(pairs: Sequence[tuple[str, Any]], indent: str = "") -> None:
    """``key: value`` lines with the values aligned (a short readable
    account of one thing, such as ``datastore status``)."""
    pairs = [(k + ":", v) for k, v in pairs if v is not None]
    width = max((len(k) for k, _ in pairs), default=0)
    for k, v in pairs:
        say(f"{indent}{k.ljust(width)} {_cell(v)}".rstrip())


def _schema_type(schema: dict) -> str:
    """A JSON Schema's type in a few characters: ``string``,
    ``integer|string``, ``array of string``, ``one of a, b``."""
    if not isinstance(schema, dict):
        return ""
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    if "const" in schema:
        return f"= {schema['const']}"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            kinds = [_schema_type(s) for s in schema[key] if not (isinstance(s, dict) and s.get("type") == "null")]
            return "|".join(k for k in kinds if k) or "any"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind if k != "null")
    if kind == "array":
        inner = _schema_type(schema.get("items") or {})
        return f"array of {inner}" if inner else "array"
    return str(kind) if kind else "any"


def _arguments(schema: dict, indent: str) -> None:
    props = (schema or {}).get("properties") or {}
    if not props:
        say(f"{indent}(no arguments)")
        return
    required = set((schema or {}).get("required") or [])
    rows = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        notes = prop.get("description") or ""
        if "default" in prop and prop["default"] is not None:
            notes = (notes + " " if notes else "") + f"(default: {json.dumps(prop['default'])})"
        rows.append((name, _schema_type(prop), "required" if name in required else "", notes))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        say((indent + "  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3]).rstrip())


def _keeps(policy) -> str | None:
    if policy is None:
        return None
    return f"keeps {policy} versions" if isinstance(policy, int) else f"keeps versions for {policy}"


def render_type(doc: dict) -> None:
    """``model type describe`` for a person: the type, its arguments,
    methods (with theirs), resources and files, aligned; ``--json`` has the
    full JSON Schemas."""
    say(f"{doc.get('type')}  {doc.get('version', '')}".rstrip())
    if doc.get("description"):
        say(doc["description"])
    say("")
    say("global arguments:")
    _arguments(doc.get("globalArguments") or {}, "  ")
    methods = doc.get("methods") or {}
    say("")
    say("methods:" if methods else "methods: none")
    for name, m in methods.items():
        say(f"  {name}  ({m.get('kind', 'action')})  {m.get('description') or ''}".rstrip())
        if ((m.get("arguments") or {}).get("properties")):
            _arguments(m["arguments"], "      ")
    for section in ("resources", "files"):
        items = doc.get(section) or {}
        if not items:
            continue
        say("")
        say(f"{section}:")
        rows = []
        for name, r in items.items():
            r = r if isinstance(r, dict) else {}
            traits = [r.get("contentType"), r.get("lifetime") and f"lifetime {r['lifetime']}",
                      _keeps(r.get("garbageCollection")),
                      r.get("sensitive") and "sensitive", r.get("streaming") and "streaming"]
            rows.append({"name": name, "traits": ", ".join(t for t in traits if t),
                         "description": r.get("description") or ""})
        width = max(len(x["name"]) for x in rows)
        tw = max(len(x["traits"]) for x in rows)
        for x in rows:
            say(f"  {x['name'].ljust(width)}  {x['traits'].ljust(tw)}  {x['description']}".rstrip())
    say("")
    say("(--json shows the full JSON Schemas)")
