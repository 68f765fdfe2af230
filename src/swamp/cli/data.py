from __future__ import annotations

import json

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, say, table


@click.group()
def data():
    """Versioned data written by methods."""


@data.command("get")
@click.argument("model")
@click.argument("name")
@click.option("--version", type=int, help="A version number (default: the highest).")
@click.option("--no-content", is_flag=True, help="Metadata only.")
@global_options
@click.pass_obj
def get(state: CliState, model, name, version, no_content):
    """Show one version of MODEL's data NAME."""
    from swamp.app import data as app_data

    result = app_data.get(state.repo(), model, name, version, content=not no_content)

    def human():
        say(f"{result['model']}/{result['name']} version {result['version']} "
            f"({result['kind']}, {result['size']} bytes, {result['createdAt']})")
        if "content" in result:
            c = result["content"]
            say(c if isinstance(c, str) else json.dumps(c, indent=2, sort_keys=True))

    emit(state, result, human)


@data.command("list")
@click.argument("model", required=False)
@global_options
@click.pass_obj
def list_(state: CliState, model):
    """List data names with their latest version."""
    from swamp.app import data as app_data

    rows = app_data.list_names(state.repo(), model)
    emit(state, rows, lambda: table(rows, ["model", "name", "latestVersion", "versions", "kind", "updatedAt"]))


@data.command("versions")
@click.argument("model")
@click.argument("name")
@global_options
@click.pass_obj
def versions(state: CliState, model, name):
    """List the versions of MODEL's data NAME, ascending."""
    from swamp.app import data as app_data

    rows = app_data.versions(state.repo(), model, name)
    emit(state, rows, lambda: table(rows, ["version", "createdAt", "size"]))


@data.command("delete")
@click.argument("model")
@click.argument("name")
@click.option("--version", type=int, help="Delete only this version.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@global_options
@click.pass_obj
def delete(state: CliState, model, name, version, yes):
    """Delete data (every version, or one)."""
    from swamp.app import data as app_data

    repo = state.repo()
    what = f"version {version} of {model}/{name}" if version else f"every version of {model}/{name}"
    confirm(state, yes, f"Delete {what}?")
    result = app_data.delete(repo, model, name, version)
    emit(state, result, f"Deleted {model}/{name} versions {', '.join(map(str, result['deletedVersions']))}")


@data.command("gc")
@click.option("--dry-run", is_flag=True, help="Only report what would be deleted.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@global_options
@click.pass_obj
def gc(state: CliState, dry_run, yes):
    """Delete expired data and versions beyond each policy."""
    from swamp.app import data as app_data

    repo = state.repo()
    if not dry_run:
        confirm(state, yes, "Garbage-collect data?")
    result = app_data.gc(repo, dry_run=dry_run)

    def human():
        verb = "would delete" if dry_run else "deleted"
        say(f"{verb} {len(result['deleted'])} version(s)")
        for r in result["deleted"]:
            say(f"  {r['model']}/{r['name']} version {r['version']}")

    emit(state, result, human)


@data.command("search")
@click.argument("query", required=False)
@click.option("--model", help="Only this model's data.")
@click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE", help="Only data with this tag (repeatable).")
@click.option("--all-versions", is_flag=True, help="Every version, not only the latest.")
@click.option("--limit", type=int, default=100, show_default=True)
@global_options
@click.pass_obj
def search(state: CliState, query, model, tags, all_versions, limit):
    """Find data by name, spec, type or tag (from the local catalog).

    Example: swamp data search --tag env=prod --model web"""
    from swamp.app import data as app_data
    from swamp.cli.inputs import parse_pairs

    rows = app_data.search(state.repo(), query, model=model, limit=limit, all_versions=all_versions,
                           tags=parse_pairs(tags, "--tag"))
    emit(state, rows, lambda: table(rows, ["model", "name", "version", "specName", "kind", "createdAt"]))


@data.command("query")
@click.argument("predicate")
@click.option("--all-versions", is_flag=True, help="Every version, not only the latest.")
@click.option("--limit", type=int, default=100, show_default=True)
@global_options
@click.pass_obj
def query(state: CliState, predicate, all_versions, limit):
    """Data for which a CEL PREDICATE holds, e.g. 'specName == "result" && size > 100'."""
    from swamp.app import data as app_data

    rows = app_data.query(state.repo(), predicate, limit=limit, all_versions=all_versions)
    emit(state, rows, lambda: table(rows, ["model", "name", "version", "specName", "kind", "createdAt"]))
