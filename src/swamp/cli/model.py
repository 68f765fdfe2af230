from __future__ import annotations

import click

from swamp.cli.inputs import collect_batch, input_options, parse_pairs
from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, emit_validation, open_in_editor, say, table
from swamp.cli.report import run_options
from swamp.cli.worker_links import link_options
from swamp.errors import UsageError


@click.group()
def model():
    """Model types, definitions and method runs.

    Example: swamp model create command/shell hello --global-arg run='echo hi'"""


# ------------------------------------------------------------------ types
@model.group("type")
def model_type():
    """Model types: what can be automated.

    Example: swamp model type search shell"""


@model_type.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def type_search(state: CliState, query):
    """List model types, builtin and local.

    Example: swamp model type search shell"""
    from swamp.app.model_definitions import search_types

    repo = _repo_or_none(state)
    result = search_types(repo, query)
    for err in result["errors"]:
        say(f"warning: {err}", err=True)
    emit(state, result["types"], lambda: table(result["types"], ["type", "version", "description"]))


@model_type.command("describe")
@click.argument("type_name", metavar="TYPE")
@global_options
@click.pass_obj
def type_describe(state: CliState, type_name):
    """Show a type's arguments (JSON Schema), methods, resources and files.

    Example: swamp model type describe command/shell"""
    from swamp.app.model_definitions import describe_type

    from swamp.cli.output import render_type

    doc = describe_type(_repo_or_none(state), type_name)
    emit(state, doc, lambda: render_type(doc))


def _repo_or_none(state: CliState):
    from swamp.errors import RepoNotFoundError

    try:
        return state.repo()
    except RepoNotFoundError:
        return None


# ------------------------------------------------------------ definitions
@model.command("create")
@click.argument("type_name", metavar="TYPE")
@click.argument("name")
@click.option("--global-arg", multiple=True, metavar="KEY=VALUE", help="A global argument (coerced to its type).")
@click.option("--input", "input_decls", multiple=True, metavar="NAME[:TYPE]",
              help="Declare a required input, read as ${{ inputs.NAME }}; TYPE is string (the default), "
                   "integer, number, boolean, object or array.")
@click.option("--input-schema", type=click.Path(dir_okay=False),
              help="A YAML or JSON file holding the inputs' JSON Schema ({properties, required}).")
@global_options
@click.pass_obj
def create(state: CliState, type_name, name, global_arg, input_decls, input_schema):
    """Create a definition of TYPE named NAME.

    Example: swamp model create command/shell greeter --input message --global-arg run='echo ${{ inputs.message }}'"""
    from swamp.app.managed_config import create_model

    inputs = _declared_inputs(input_decls, input_schema)
    result = create_model(state.repo(), type_name, name, parse_pairs(global_arg, "--global-arg"), inputs=inputs)
    emit(state, result, f"Created model {result['name']} ({result['type']}) at {result['path']}")


_INPUT_TYPES = ("string", "integer", "number", "boolean", "object", "array")


def _declared_inputs(decls: tuple[str, ...], schema_file: str | None) -> dict | None:
    """The definition's `inputs:` schema from --input-schema and --input."""
    import re

    from swamp.util import yamlio

    schema: dict = {}
    if schema_file:
        try:
            schema = yamlio.loads(open(schema_file, encoding="utf-8").read(), schema_file)
        except OSError as e:
            raise UsageError(f"--input-schema {schema_file}: {e.strerror or e}",
                             hint="give a YAML or JSON file holding {properties: {NAME: {type: string}}}") from None
        if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
            raise UsageError(f"--input-schema {schema_file}: not a JSON Schema object with 'properties'",
                             hint="write {properties: {NAME: {type: string}}, required: [NAME]}")
    for decl in decls:
        key, _, kind = decl.partition(":")
        kind = kind or "string"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise UsageError(f"--input {decl!r}: {key!r} is not a name (letters, digits, '_')",
                             hint="write --input NAME or --input NAME:TYPE")
        if kind not in _INPUT_TYPES:
            raise UsageError(f"--input {decl!r}: unknown type {kind!r}", hint=f"types: {', '.join(_INPUT_TYPES)}")
        schema.setdefault("properties", {})[key] = {"type": kind}
        if key not in schema.setdefault("required", []):
            schema["required"].append(key)
    return schema or None


@model.command("get")
@click.argument("name")
@global_options
@click.pass_obj
def get(state: CliState, name):
    """Show a definition.

    Example: swamp model get hello"""
    from swamp.cli import model_get

    model_get.run(state, name)


@model.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def search(state: CliState, query):
    """List definitions whose name or type contains QUERY.

    Example: swamp model search hello"""
    from swamp.app.model_definitions import search_models

    rows = search_models(state.repo(), query)
    emit(state, rows, lambda: table(rows, ["name", "type", "path"]))


model.add_command(search, "list")  # upstream's alias


@model.command("validate")
@click.argument("name", required=False)
@global_options
@click.pass_obj
def validate(state: CliState, name):
    """Check definitions against their types. Exits 1 when any is invalid.

    Example: swamp model validate hello"""
    from swamp.app.models import validate as validate_models

    result = validate_models(state.repo(), name)
    emit_validation(state, result, "models")


@model.command("delete")
@click.argument("name")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--force", is_flag=True, help="Delete the model's data too.")
@global_options
@click.pass_obj
def delete(state: CliState, name, yes, force):
    """Delete a definition (refused while it has data, unless --force).

    Example: swamp model delete hello -y"""
    from swamp.app import models

    repo = state.repo()
    confirm(state, yes, f"Delete model {name}?")
    result = models.delete(repo, name, force=force)
    emit(state, result, f"Deleted model {name}")


# ---------------------------------------------------------------- methods
@model.group("method")
def method():
    """Run methods.

    Example: swamp model method run hello execute"""


@method.command("run")
@click.argument("model_name", metavar="MODEL|TYPE")
@click.argument("method_name", metavar="METHOD")
@click.argument("direct_name", metavar="[NAME]", required=False)
@input_options
@click.option("--tag", multiple=True, metavar="KEY=VALUE", help="Tag the data this run writes.")
@click.option("--placement", "placement", multiple=True, metavar="LABEL=VALUE",
              help="Run on a worker with this label (swamp docs workers; needs --scheduler). Repeatable.")
@click.option("--scheduler", envvar="SWAMP_SCHEDULER", metavar="ADDRESS",
              help="The Dask scheduler of the workers --placement picks from. Default: $SWAMP_SCHEDULER.")
@link_options("--insecure-scheduler")
@run_options
@global_options
@click.pass_obj
def method_run(state: CliState, model_name, method_name, direct_name, input_, input_file, stdin_input, tag,
               placement=(), scheduler=None, link=None, **options):
    """Run METHOD of MODEL and print its output record. Exits 1 if it fails.

    With a TYPE and a NAME instead, runs the type directly as the model
    NAME: no definition to write first; one is kept for NAME (not listed
    by 'model search'), holding the global arguments given with --input;
    --input keys that are the method's arguments go to the method.

    With --stdin holding NDJSON (one JSON object a line), runs it once per
    line in one session (the versions they write are contiguous) and prints
    a list of records.

    Example: swamp model method run hello execute --input run='echo hi'

    Example: swamp model method run command/shell execute greet --input run='echo hi'"""
    from swamp.cli import method_run as body

    body.run(state, model_name, method_name, direct_name, input_, input_file, stdin_input, tag,
             placement, scheduler, link=link, **options)


@model.command("cancel")
@click.argument("name")
@global_options
@click.pass_obj
def cancel(state: CliState, name):
    """Stop the 'model method run' of NAME running on this machine: it is
    interrupted as with Ctrl-C, recorded as cancelled, and what it wrote so
    far is kept, also when the run ignores Ctrl-C (started with '&' in a
    script, by nohup or by cron). (A step of a workflow stops with 'swamp
    workflow cancel'.)

    Example: swamp model cancel hello"""
    from swamp.app import running

    result = running.cancel(state.repo(), name)
    emit(state, result, f"cancelled {result['model']}.{result['method']} (pid {result['pid']})"
                        if result["cancelled"] else f"asked {result['model']}.{result['method']} to stop")


@model.command("evaluate")
@click.argument("name")
@click.option("--method", "method_name", help="Only this method (default: every method).")
@input_options
@global_options
@click.pass_obj
def evaluate(state: CliState, name, method_name, input_, input_file, stdin_input):
    """Show NAME's arguments with their expressions resolved now: what a run
    of each method would get (vault references stay references).

    Example: swamp model evaluate hello --method execute --input run='echo hi'"""
    from swamp.app import models
    from swamp.util import yamlio

    inputs = collect_batch(input_, input_file, stdin_input)
    if len(inputs) > 1:
        raise UsageError("model evaluate takes one set of inputs")
    if inputs[0] and not method_name:
        raise UsageError("--input needs --method: inputs belong to one method")
    result = models.evaluate(state.repo(), name, method_name, inputs[0])
    emit(state, result, lambda: say(yamlio.dumps(result).rstrip()))


@model.command("edit")
@click.argument("name")
@global_options
@click.pass_obj
def edit(state: CliState, name):
    """Open NAME's definition in $EDITOR, then check it.

    Example: EDITOR=vi swamp model edit hello"""
    from swamp.app.models import validate as validate_models
    from swamp.app.model_definitions import get_model

    repo = state.repo()
    path = repo.root / get_model(repo, name)["path"]
    open_in_editor(state, path, "model", name, managed=repo.managed_config)
    from swamp.app.managed_config import publish_edit

    result = validate_models(repo, path.stem)
    if result["valid"]:
        publish_edit(repo, "model", name, path)  # managed config: publish it (only once it is valid)
    emit_validation(state, result, "models")


@method.command("describe")
@click.argument("model_name", metavar="MODEL")
@click.argument("method_name", metavar="METHOD")
@global_options
@click.pass_obj
def method_describe(state: CliState, model_name, method_name):
    """Show what METHOD of MODEL does, the arguments it takes and the values
    the definition gives them.

    Example: swamp model method describe hello execute"""
    from swamp.app.model_definitions import describe_method
    from swamp.util import yamlio

    result = describe_method(state.repo(), model_name, method_name)
    emit(state, result, lambda: say(yamlio.dumps(result).rstrip()))


# ---------------------------------------------------------------- outputs
@model.group("output")
def output():
    """Records of method runs.

    Example: swamp model output search hello"""


@output.command("get")
@click.argument("output_id", metavar="OUTPUT_ID_OR_MODEL")
@global_options
@click.pass_obj
def output_get(state: CliState, output_id):
    """Show one method run's record: by its id (or a unique start of it), or
    a model's name for that model's newest run.

    Example: swamp model output get hello"""
    from swamp.app import models

    emit(state, models.output(state.repo(), output_id, or_model=True))


@output.command("search")
@click.argument("model_name", metavar="MODEL", required=False)
@click.option("--method", "method_name", help="Only runs of this method.")
@click.option("--status", type=click.Choice(["succeeded", "failed", "cancelled"]), help="Only runs that ended so.")
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many runs.")
@global_options
@click.pass_obj
def output_search(state: CliState, model_name, method_name, status, limit):
    """List method runs, newest first.

    Example: swamp model output search hello --status failed --limit 5"""
    from swamp.app import models

    rows = models.outputs(state.repo(), model_name, method=method_name, status=status, limit=limit)
    emit(state, rows, lambda: table(rows, ["id", "modelName", "methodName", "status", "startedAt", "durationMs",
                                           "initiatedBy"]))


@output.command("logs")
@click.argument("output_id", metavar="OUTPUT_ID_OR_MODEL")
@global_options
@click.pass_obj
def output_logs(state: CliState, output_id):
    """Print one method run's log: by its id, or a model's name for that
    model's newest run.

    Example: swamp model output logs hello"""
    from swamp.app import models

    result = models.output_log(state.repo(), output_id, or_model=True)
    emit(state, result, lambda: click.echo(result["log"], nl=False))


@output.command("data")
@click.argument("output_id", metavar="OUTPUT_ID_OR_MODEL")
@global_options
@click.pass_obj
def output_data(state: CliState, output_id):
    """List the data versions one method run wrote (a model's name: its
    newest run).

    Example: swamp model output data 3f2a9c1e"""
    from swamp.app import models

    rows = models.output_data(state.repo(), output_id, or_model=True)
    emit(state, rows, lambda: table(rows, ["name", "version", "kind", "size", "createdAt"]))


@method.group("history")
def method_history():
    """Records of method runs (the same as 'swamp model output').

    Example: swamp model method history search hello"""


method_history.add_command(output_get, "get")
method_history.add_command(output_search, "search")
method_history.add_command(output_logs, "logs")


# upstream's other names (cli/aliases.py)
from swamp.cli.aliases import hidden_alias  # noqa: E402

hidden_alias(model_type, type_search, "list")
hidden_alias(output, output_search, "list")
hidden_alias(method_history, output_search, "list")
