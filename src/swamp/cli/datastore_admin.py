"""`swamp datastore namespace|compact|type`: administration of the datastore
(registered on the `datastore` group by cli/datastore.py)."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, human_size, say, table


@click.group("namespace", invoke_without_command=True)
@global_options
@click.pass_context
def namespace(ctx: click.Context, **_):
    """List namespaces of the shared datastore, join one, or move there.

    Example: swamp datastore namespace list"""
    if ctx.invoked_subcommand is None:
        ctx.invoke(namespace_list)


@namespace.command("list")
@global_options
@click.pass_obj
def namespace_list(state: CliState):
    """The namespaces under the bucket and prefix (one listing), this one marked.

    Example: swamp datastore namespace list
    """
    from swamp.app.namespaces import list_namespaces

    rows = list_namespaces(state.repo())
    emit(state, rows, lambda: table([{**r, "current": "*" if r["current"] else ""} for r in rows],
                                    ["current", "namespace", "objects", "bytes"], ["", "NAMESPACE", "OBJECTS", "BYTES"]))


def _render(state: CliState, result: dict) -> None:
    def human():
        if not result["changed"]:
            say(f"already in namespace {result['namespace']}")
            return
        if result["migrated"]:
            say(f"moved to namespace {result['namespace']}: published {result.get('filesPushed', 0)} files "
                f"({human_size(result.get('bytesPushed', 0))}); namespace {result['previous']} is left as it was "
                f"for the peers still on it ('swamp datastore namespace set {result['namespace']}' moves them)")
        else:
            say(f"now in namespace {result['namespace']}"
                + (" (new, empty)" if result.get("created") else "")
                + f": pulled {result.get('filesPulled', 0)} files; the state of {result['previous']} is still "
                  "there, for its peers")
        if result.get("lostLeaseFolders"):
            say(f"kept: {result['lostLeaseFolders']} folder(s) of work set aside under lost leases, never "
                f"published, in {result['lostLeaseDir']}")

    emit(state, result, human)


@namespace.command("set")
@click.argument("name")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@global_options
@click.pass_obj
def namespace_set(state: CliState, name, yes):
    """Join namespace NAME: this checkout's runtime state becomes NAME's
    (refused while changes made here are unpublished).

    Example: swamp datastore namespace set team-b -y
    """
    from swamp.app.namespaces import set_namespace

    repo = state.repo()
    confirm(state, yes, f"Replace this checkout's runtime state with namespace {name!r}'s?")
    _render(state, set_namespace(repo, name))


@namespace.command("unset")
@click.option("--migrate", "migrate_state", is_flag=True, help="Take this checkout's state along.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@global_options
@click.pass_obj
def namespace_unset(state: CliState, migrate_state, yes):
    """Go back to the namespace 'default' (with --migrate, taking this
    checkout's state along).

    Example: swamp datastore namespace unset --migrate -y
    """
    from swamp.app.namespaces import unset

    repo = state.repo()
    confirm(state, yes, "Move this checkout to namespace 'default'?")
    _render(state, unset(repo, migrate_state=migrate_state))


@namespace.command("migrate")
@click.argument("name")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@global_options
@click.pass_obj
def namespace_migrate(state: CliState, name, yes):
    """Publish this checkout's state into the empty namespace NAME and move
    there (the old namespace is left as it was).

    Example: swamp datastore namespace migrate team-a -y
    """
    from swamp.app.namespaces import migrate

    repo = state.repo()
    confirm(state, yes, f"Publish this checkout's state into namespace {name!r} and move there?")
    _render(state, migrate(repo, name))


@click.command("compact")
@global_options
@click.pass_obj
def compact(state: CliState):
    """Compact the local query catalog and sync state (sizes before and after).

    Example: swamp datastore compact
    """
    from swamp.app.datastore import compact as run

    result = run(state.repo())

    def human():
        for p in result["parts"]:
            if p["bytesBefore"] is None:
                say(f"{p['part']}: {p.get('removed', 0)} left by killed writers removed")
            else:
                say(f"{p['part']}: {human_size(p['bytesBefore'])} -> {human_size(p['bytesAfter'])} ({p['path']})")
        say(f"total: {human_size(result['bytesBefore'])} -> {human_size(result['bytesAfter'])}")

    emit(state, result, human)


@click.group("type")
def datastore_type():
    """The datastore types available.

    Example: swamp datastore type search s3"""


@datastore_type.command("search")
@click.argument("query", required=False)
@global_options
@click.pass_obj
def type_search(state: CliState, query):
    """The datastore types whose name or description contains QUERY (all without one).

    Example: swamp datastore type search s3
    """
    from swamp.app.datastore import type_search as run

    rows = run(query)

    def human():
        if not rows:
            say(f"no datastore type matches {query!r}; types: filesystem, gcs, s3")
            return
        for r in rows:
            say(f"{r['type']:<11} {r['description']}")
            say(f"{'':<11} setup: {r['setup']}" + ("" if r["available"] else f"  (needs: {r['install']})"))

    emit(state, rows, human)


COMMANDS = (namespace, compact, datastore_type)


# upstream's other name (cli/aliases.py)
from swamp.cli.aliases import hidden_alias  # noqa: E402

hidden_alias(datastore_type, type_search, "list")
