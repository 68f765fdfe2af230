"""`swamp completions bash|zsh|fish`, and the names the shell is offered.

Completion is click's: the script calls swamp back with
``_SWAMP_COMPLETE=<shell>_complete`` and the words typed so far. When that
variable is set, ``attach`` is called on the root group and gives every
parameter that names a model, a method, a workflow, a vault, a model type
or a data name a completer, chosen by the command's group and the
parameter's name, so no command file has to declare one (workflow step
names and run ids too). The names come
from swamp.app.names: the checkout's files, no sync, no network."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit

SHELLS = ("bash", "fish", "zsh")
INSTALL = {
    "bash": "eval \"$(swamp completions bash)\"   # in ~/.bashrc",
    "zsh": "eval \"$(swamp completions zsh)\"    # in ~/.zshrc",
    "fish": "swamp completions fish > ~/.config/fish/completions/swamp.fish",
}


@click.command("completions")
@click.argument("shell", type=click.Choice(SHELLS))
@global_options
@click.pass_obj
def completions(state: CliState, shell: str):
    """Print the completion script for SHELL (bash, zsh or fish). It
    completes commands and options, and the names of models, methods,
    model types, data, workflows and vaults of the repository you are in.

    Example: eval "$(swamp completions bash)\""""
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command
    script = get_completion_class(shell)(root, {}, "swamp", "_SWAMP_COMPLETE").source()
    emit(state, {"shell": shell, "script": script, "install": INSTALL[shell]},
         lambda: click.echo(script, nl=not script.endswith("\n")))


# ------------------------------------------------------------ the names
def _repo_dir(ctx: click.Context):
    state = ctx.find_object(CliState)
    return state.repo_dir if state is not None else None


def _starting(names: list[str], incomplete: str) -> list[str]:
    return [n for n in names if n.startswith(incomplete)]


def _model_of(ctx: click.Context) -> str | None:
    for key in ("model_name", "model", "name"):
        value = ctx.params.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _models(ctx, param, incomplete):
    from swamp.app import names

    return _starting(names.models(_repo_dir(ctx)), incomplete)


def _methods(ctx, param, incomplete):
    from swamp.app import names

    model = _model_of(ctx)
    return _starting(names.methods(model, _repo_dir(ctx)), incomplete) if model else []


def _types(ctx, param, incomplete):
    from swamp.app import names

    return _starting(names.model_types(_repo_dir(ctx)), incomplete)


def _data(ctx, param, incomplete):
    from swamp.app import names

    model = ctx.params.get("model")
    return _starting(names.data(model, _repo_dir(ctx)), incomplete) if isinstance(model, str) and model else []


def _workflows(ctx, param, incomplete):
    from swamp.app import names

    return _starting(names.workflows(_repo_dir(ctx)), incomplete)


def _steps(ctx, param, incomplete):
    from swamp.app import names

    workflow = ctx.params.get("name")
    return _starting(names.steps(workflow, _repo_dir(ctx)), incomplete) if isinstance(workflow, str) and workflow else []


def _run_ids(ctx, param, incomplete):
    from swamp.app import names

    return _starting(names.run_ids(_repo_dir(ctx)), incomplete)


def _vaults(ctx, param, incomplete):
    from swamp.app import names

    return _starting(names.vaults(_repo_dir(ctx)), incomplete)


#: (top-level group, parameter name) -> completer; commands named in NEW name something new
COMPLETERS = {
    ("model", "name"): _models, ("model", "model_name"): _models, ("model", "method_name"): _methods,
    ("model", "type_name"): _types,
    ("data", "model"): _models, ("data", "name"): _data,
    ("workflow", "name"): _workflows, ("workflow", "step"): _steps, ("workflow", "run_id"): _run_ids,
    ("vault", "vault_name"): _vaults, ("vault", "name"): _vaults, ("vault", "source"): _vaults,
    ("vault", "dest"): _vaults,
}
#: commands whose NAME is a new one: nothing to offer
NEW = {("model", "create"), ("workflow", "create"), ("vault", "create")}


def _walk(command: click.Command, group: str, path: tuple[str, ...] = ()) -> None:
    new = (group, path[0] if path else "") in NEW
    for p in command.params:
        fn = COMPLETERS.get((group, p.name))
        if new and p.name in ("name", "model_name", "vault_name"):
            continue  # a name for something new: nothing to offer
        if fn is not None and p._custom_shell_complete is None:
            p._custom_shell_complete = fn
    subs = {**getattr(command, "commands", {}), **getattr(command, "subcommands", {})}
    for name, sub in subs.items():
        _walk(sub, group, (*path, name))


def attach(root: click.Group) -> None:
    """Give the commands of each group the root loads from now on their
    completers (the groups load lazily: swamp.cli.main.LazyGroup)."""
    get = root.get_command

    def get_command(ctx, name):
        command = get(ctx, name)
        if command is not None and not getattr(command, "_swamp_completers", False):
            _walk(command, name)
            command._swamp_completers = True
        return command

    root.get_command = get_command
