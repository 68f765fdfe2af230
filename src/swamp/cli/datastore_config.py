"""``swamp datastore config``: managed config (definitions, workflows,
vault configurations and the extension lockfile kept in the shared
datastore). The use cases are in swamp.app.managed_config."""

from __future__ import annotations

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say


@click.group("config")
def config():
    """Managed config: definitions, workflows, vault configs and the lockfile in the shared datastore.

    Example: swamp datastore config status"""


@config.command("migrate")
@click.option("--dry-run", is_flag=True, help="Show what would be copied; change nothing.")
@click.option("--remove-repo-files", is_flag=True,
              help="Once published, delete the repository's copies (by default they stay, no longer read).")
@click.option("--keep-datastore", is_flag=True,
              help="Where the datastore already holds another version of a document (a peer's), keep it "
                   "instead of stopping.")
@global_options
@click.pass_obj
def migrate(state: CliState, dry_run, remove_repo_files, keep_datastore):
    """Move this repository's definitions, workflows, vault configurations
    and extension lockfile into the shared datastore, publish them, then
    read them from there (managedConfig: true). Safe to run again: a run
    whose publish failed is completed by the next one.

    Example: swamp datastore config migrate --dry-run"""
    from swamp.app.managed_config import migrate as run

    result = run(state.repo(), dry_run=dry_run, remove_repo_files=remove_repo_files, keep_datastore=keep_datastore)

    def human():
        if result.get("dryRun"):
            say(f"would copy {len(result['copy'])} file(s) into the datastore's config tier "
                f"({len(result['alreadyThere'])} already there); lockfile: {result['lockfile']}")
            for rel in result["copy"]:
                say(f"  copy      {rel}")
            for rel in result["differs"]:
                say(f"  DIFFERS   {rel} (the datastore holds another version)")
            for name in result["lockfileConflicts"]:
                say(f"  DIFFERS   extensions/lockfile.json: extension {name}")
            return
        say(f"config is now managed: {len(result['copied'])} file(s) copied and published "
            f"({len(result['alreadyThere'])} already there); lockfile: {result['lockfile']}")
        for rel in result["keptDatastore"]:
            say(f"  kept the datastore's version of {rel}")
        say(f"repository files: {result['repositoryFiles']}")

    emit(state, result, human)


@config.command("publish")
@global_options
@click.pass_obj
def publish(state: CliState):
    """Publish definitions, workflows and vault configs changed by hand in
    the datastore's config tier (under .swamp/); 'model edit' and the other
    commands publish their own changes.

    Example: swamp datastore config publish"""
    from swamp.app.managed_config import publish as run

    result = run(state.repo())
    emit(state, result, f"{result['published']} changed file(s) published "
                        f"({result['documents']} document(s) in the config tier)")


@config.command("status")
@global_options
@click.pass_obj
def status(state: CliState):
    """Say whether config is managed, and how many documents the
    datastore's config tier and the repository each hold.

    Example: swamp datastore config status --json"""
    from swamp.app.managed_config import status as run

    result = run(state.repo())

    def human():
        say(f"managed: {'yes' if result['managed'] else 'no'} (reads {result['readsFrom']}: "
            f"{result['configRoot']})")
        for where in ("datastore", "repository"):
            c = result[where]
            if c is not None:
                say(f"  {where:<10} {c['models']} model(s), {c['workflows']} workflow(s), {c['vaults']} vault(s), "
                    f"lockfile: {'yes' if c['lockfile'] else 'no'}")
        for rel in result["differs"]:
            say(f"  differs    {rel} (the repository's copy is not the datastore's)")
        for note in result["notes"]:
            say(f"note: {note}")

    emit(state, result, human)
