"""The CLI reference (docs/cli.md), generated from the click commands
themselves so that it cannot drift from them.

Regenerate after changing any command, option or help text:

    .venv/bin/python -m swamp.cli.reference > docs/cli.md

tests/unit/test_docs.py fails while docs/cli.md differs from what this prints.
The output depends only on the click tree (never on the terminal's width or
the environment), so it is the same on every machine.
"""

from __future__ import annotations

import inspect
import sys

import click

try:  # click >= 8.3 marks "no default" with a sentinel; older ones use None
    from click._utils import UNSET as _UNSET
except ImportError:  # pragma: no cover
    _UNSET = None

REGENERATE = ".venv/bin/python -m swamp.cli.reference > docs/cli.md"


def _escape(text: str) -> str:
    """Prose from a help string, safe in Markdown (GitHub and Python-Markdown
    alike): no accidental emphasis, links, HTML tags or table cells."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "\\`*_[]|":
        text = text.replace(ch, "\\" + ch)
    return text


def _paragraphs(help_text: str | None) -> list[str]:
    """A click help string as paragraphs: cut at ``\\f`` as click does, each
    paragraph on one line (Markdown wraps it again)."""
    if not help_text:
        return []
    text = inspect.cleandoc(help_text).split("\f", 1)[0]
    out = []
    for block in text.split("\n\n"):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip() and ln.strip() != "\b"]
        if lines:
            out.append(" ".join(lines))
    return out


def _default(param: click.Parameter, ctx: click.Context) -> str:
    shown = getattr(param, "show_default", None)
    if isinstance(shown, str):
        return _escape(shown)  # the command's own words for a default it computes
    value = param.get_default(ctx, call=False)
    if value is _UNSET or value is None or value == () or value == "":
        return ""
    if callable(value):
        return "(computed)"
    if isinstance(param, click.Option) and param.is_flag and not param.count:
        return ""  # a flag is off unless given
    if isinstance(value, (list, tuple)):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def _option_row(opt: click.Option, ctx: click.Context) -> str:
    names = ", ".join(opt.opts + opt.secondary_opts)
    if isinstance(opt.type, click.Choice):
        names += " CHOICE"  # the choices are listed in the text; '|' would split the table
    elif not opt.is_flag:
        names += " " + opt.make_metavar(ctx).replace("|", "/")
    notes = _paragraphs(opt.help)
    extra = []
    if isinstance(opt.type, click.Choice):
        extra.append("one of " + ", ".join(f"`{c}`" for c in opt.type.choices))
    if opt.multiple:
        extra.append("may be repeated")
    if opt.required:
        extra.append("required")
    desc = " ".join(_escape(n) for n in notes)
    if extra:
        desc = (desc + " " if desc else "") + "(" + "; ".join(extra) + ")"
    return f"| `{names}` | {_default(opt, ctx)} | {desc} |"


def _options_table(options: list[click.Option], ctx: click.Context) -> list[str]:
    if not options:
        return []
    return ["| option | default | meaning |", "|---|---|---|", *(_option_row(o, ctx) for o in options)]


def _visible_options(cmd: click.Command, ctx: click.Context, skip: set[str]) -> list[click.Option]:
    help_names = set(ctx.help_option_names)
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden
            and not help_names & set(p.opts) and p.name not in skip]


def _children(group: click.Group, ctx: click.Context) -> list[tuple[str, click.Command]]:
    out = []
    for name in sorted(group.list_commands(ctx)):
        cmd = group.get_command(ctx, name)
        if cmd is not None and not cmd.hidden:
            out.append((name, cmd))
    return out


def _walk(cmd: click.Command, ctx: click.Context) -> list[tuple[click.Command, click.Context]]:
    """Every command below ``cmd`` (depth first, sorted by name)."""
    out = []
    if isinstance(cmd, click.Group):
        for name, sub in _children(cmd, ctx):
            sub_ctx = click.Context(sub, info_name=name, parent=ctx)
            out.append((sub, sub_ctx))
            out += _walk(sub, sub_ctx)
    for name, sub in sorted(getattr(cmd, "subcommands", {}).items()):  # groups.CommandWithSubcommands
        if sub.hidden:
            continue
        sub_ctx = click.Context(sub, info_name=f"{ctx.info_name} {name}", parent=ctx.parent)
        out.append((sub, sub_ctx))
        out += _walk(sub, sub_ctx)  # a group there (serve daemon) has commands of its own
    return out


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def _section(cmd: click.Command, ctx: click.Context, global_names: set[str]) -> list[str]:
    path = ctx.command_path
    level = "##" if path.count(" ") == 1 else "###"
    lines = [f"{level} {path}", ""]
    usage = " ".join([path, *cmd.collect_usage_pieces(ctx)])
    lines += ["```text", usage, "```", ""]
    for para in _paragraphs(cmd.help):
        lines += [_escape(para), ""]
    args = [p for p in cmd.params if isinstance(p, click.Argument)]
    if args:
        lines += ["Arguments: " + ", ".join(
            f"`{a.make_metavar(ctx)}`" + ("" if a.required else " (optional)")
            + (" (repeatable)" if a.nargs == -1 else "") for a in args), ""]
    table = _options_table(_visible_options(cmd, ctx, global_names), ctx)
    if table:
        lines += [*table, ""]
    if isinstance(cmd, click.Group):
        subs = _children(cmd, ctx)
        lines += ["Commands: " + ", ".join(f"[{name}](#{_anchor(path + ' ' + name)})" for name, _ in subs), ""]
    return lines


def render(root: click.Group | None = None) -> str:
    """The whole reference, as Markdown."""
    if root is None:
        from swamp.cli.main import cli as root
    ctx = click.Context(root, info_name="swamp")
    # The root's options are the global ones, less --version (the root's own).
    globals_ = _visible_options(root, ctx, {"version"})
    global_names = {o.name for o in globals_}
    commands = _walk(root, ctx)
    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated from the click commands by swamp/cli/reference.py; do not edit by hand.",
        f"     Regenerate with: {REGENERATE} -->",
        "",
        "Generated from the commands themselves. Every command takes the",
        "[global options](#global-options) too, before or after its own arguments",
        "(`swamp --json data list` and `swamp data list --json` are the same).",
        "`swamp --version` prints the version.",
        "",
        "Exit codes are the same for every command:",
        "",
        "- `0`: done; a report command (`validate`, `datastore verify`, `access can-i`) found nothing wrong.",
        "- `1`: the command line was fine, but the command could not do its job: something it names does",
        "  not exist or cannot be read (a model, a workflow, a run, a lock, an `--input KEY=@FILE`, an",
        "  `--input-file`, a `--cert-file`), a value is wrong for what it names (an input the method does",
        "  not take), a report found a problem, a run failed, a conflict, work left unpublished.",
        "- `2`: a usage error: the command was refused before it did anything, because of how it was",
        "  called: an unknown command or option, a missing or malformed value (`--input novalue`, a URL",
        "  without a scheme), options that exclude each other, `-y` or a terminal needed, or a command that",
        "  does not apply to this repository as it is set up. Nothing was changed.",
        "- `75`: a lock or lease wait ran out (`SWAMP_LOCK_TIMEOUT_MS`); nothing was changed, try again.",
        "- `130`: interrupted (Ctrl-C).",
        "",
        "With `--json`, an error is one JSON document on stderr: `{\"error\", \"code\", \"hint\"}`; a file "
        "refused for its schema errors adds `\"errors\": [{\"path\", \"message\"}]`, one per error, sorted by path "
        "(without --json they are printed one a line).",
        "",
        "```text",
        " ".join(["swamp", *root.collect_usage_pieces(ctx)]),
        "```",
        "",
        *(_escape(p) + "\n" for p in _paragraphs(root.help)),
        "## Global options",
        "",
        *_options_table(globals_, ctx),
        "",
        "## Commands",
        "",
    ]
    for cmd, sub_ctx in commands:
        depth = sub_ctx.command_path.count(" ") - 1
        first = _paragraphs(cmd.short_help or cmd.help)
        short = _escape(first[0]) if first else ""
        lines.append(f"{'    ' * depth}- [{sub_ctx.command_path}](#{_anchor(sub_ctx.command_path)}): {short}")
    lines.append("")
    for cmd, sub_ctx in commands:
        lines += _section(cmd, sub_ctx, global_names)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
