from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import confirm, emit, say, table
from swamp.errors import UsageError


@click.group()
def data():
    """Versioned data written by methods.

    Example: swamp data list hello"""


@data.command("get")
@click.argument("model")
@click.argument("name")
@click.option("--version", type=int, help="A version number (default: the highest).")
@click.option("--no-content", is_flag=True, help="Metadata only.")
@click.option("--workflow", metavar="WORKFLOW|RUN",
              help="The highest version a workflow's runs wrote (its name), or one run (its id or a start of it).")
@global_options
@click.pass_obj
def get(state: CliState, model, name, version, no_content, workflow):
    """Show one version of MODEL's data NAME.

    Example: swamp data get web result --workflow 3f2a9c1e"""
    from swamp.cli import data_get

    data_get.run(state, model, name, version, no_content, workflow)


@data.command("list")
@click.argument("model", required=False)
@global_options
@click.pass_obj
def list_(state: CliState, model):
    """List data names with their latest version.

    Example: swamp data list hello"""
    from swamp.cli import data_list

    data_list.run(state, model)


@data.command("versions")
@click.argument("model")
@click.argument("name")
@global_options
@click.pass_obj
def versions(state: CliState, model, name):
    """List the versions of MODEL's data NAME, ascending.

    Example: swamp data versions hello result"""
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
    """Delete data (every version, or one).

    Example: swamp data delete hello result --version 1 -y"""
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
    """Delete expired data and versions beyond each policy.

    Example: swamp data gc --dry-run"""
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
@click.option("--limit", type=int, default=100, show_default=True, help="At most this many results.")
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
@click.option("--limit", type=int, default=100, show_default=True, help="At most this many results.")
@global_options
@click.pass_obj
def query(state: CliState, predicate, all_versions, limit):
    """Data for which a CEL PREDICATE holds, e.g. 'specName == "result" && size > 100'.

    Example: swamp data query 'specName == "result"' --limit 10"""
    from swamp.app import data as app_data

    rows = app_data.query(state.repo(), predicate, limit=limit, all_versions=all_versions)
    emit(state, rows, lambda: table(rows, ["model", "name", "version", "specName", "kind", "createdAt"]))


@data.command("rename")
@click.argument("model")
@click.argument("old")
@click.argument("new")
@global_options
@click.pass_obj
def rename(state: CliState, model, old, new):
    """Rename MODEL's data OLD to NEW: every version keeps its number, and
    OLD forwards to NEW (reads of OLD find NEW's versions).

    Example: swamp data rename web result page"""
    from swamp.app import data as app_data

    result = app_data.rename(state.repo(), model, old, new)
    emit(state, result, f"Renamed {model}/{old} to {new} ({len(result['versions'])} version(s))")


@data.command("prune")
@click.argument("model", required=False)
@click.argument("name", required=False)
@click.option("--older-than", metavar="DURATION", help="Versions older than this (e.g. 30d).")
@click.option("--keep", type=int, metavar="N", help="Keep the newest N versions of each name.")
@click.option("--orphans", is_flag=True, help="Every version of data whose definition is gone.")
@click.option("--dry-run", is_flag=True, help="Only report what would be deleted.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@global_options
@click.pass_obj
def prune(state: CliState, model, name, older_than, keep, orphans, dry_run, yes):
    """Delete old versions (by age or count; a name's newest version always
    stays), or the data of deleted definitions.

    Example: swamp data prune web --keep 10 --dry-run"""
    from swamp.app import data as app_data

    repo = state.repo()
    if name is not None and model is None:
        raise UsageError("NAME needs MODEL")
    if not dry_run:
        confirm(state, yes, "Prune data?")
    result = app_data.prune(repo, model, name, older_than=older_than, keep=keep, orphans=orphans,
                            dry_run=dry_run)

    def human():
        verb = "would delete" if dry_run else "deleted"
        say(f"{verb} {len(result['deleted'])} version(s)")
        for r in result["deleted"]:
            say(f"  {r['model']}/{r['name']} version {r['version']}")

    emit(state, result, human)
