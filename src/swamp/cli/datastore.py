from __future__ import annotations

import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, summary, table


@click.group()
def datastore():
    """Where runtime state lives, and sharing it.

    Example: swamp datastore status"""


@datastore.group("setup")
def setup():
    """Choose the datastore for this repository.

    Example: swamp datastore setup filesystem --path /srv/swamp-state"""


@setup.command("filesystem")
@click.option("--path", required=True, type=click.Path(file_okay=False), help="The directory to use.")
@global_options
@click.pass_obj
def setup_filesystem(state: CliState, path):
    """Use a directory (possibly shared by several processes) as the datastore.

    Example: swamp datastore setup filesystem --path /srv/swamp-state"""
    from swamp.app.datastore import setup_filesystem as run

    result = run(state.repo(), path)
    emit(state, result, f"Datastore is now {result['location']} "
                        f"({result['filesCopied']} files copied, {result['filesKept']} already there)")


def _shared_options(f):
    f = click.option("--hydration", type=click.Choice(["full", "lazy"]), default="full", show_default=True,
                     help="lazy: fetch file contents on first read.")(f)
    f = click.option("--endpoint-url", help="An S3-compatible server or GCS emulator.")(f)
    f = click.option("--namespace", default="default", show_default=True,
                     help="Lets several repositories share one bucket without seeing each other's data.")(f)
    f = click.option("--prefix", default="", help="Key prefix inside the bucket.")(f)
    f = click.option("--bucket", required=True, help="The bucket; it must exist, unless --create-bucket.")(f)
    f = click.option("--create-bucket", is_flag=True, help="Create the bucket when it does not exist.")(f)
    return f


def _run_setup(state: CliState, **fields):
    from swamp.app.datastore import object_store_config, setup_object_store
    from swamp.util import locations
    from swamp.util.names import check_name

    # Every value a person typed is checked before any client library sees it.
    check_name(fields["namespace"], "namespace")
    fields["bucket"] = locations.check_bucket(fields["bucket"])
    fields["prefix"] = locations.check_prefix(fields["prefix"])
    if fields.get("endpointUrl") is not None:
        fields["endpointUrl"] = locations.check_endpoint_url(fields["endpointUrl"])
    if fields.get("region") is not None:
        fields["region"] = locations.check_region(fields["region"])
    from swamp.cli.progress import progress_for

    create_bucket = fields.pop("create_bucket")
    result = setup_object_store(state.repo(), object_store_config(**fields), progress=progress_for(state),
                                create_bucket=create_bucket)

    def human():
        if result["bucketCreated"]:
            say(f"Created the bucket {fields['bucket']}")
        say(f"Datastore was {result['from']}; it is now {result['location']} (namespace {result['namespace']})")
        if result.get("lostLeaseFolders"):
            say(f"kept: {result['lostLeaseFolders']} folder(s) of work set aside under lost leases, never "
                f"published, in {result['lostLeaseDir']}")
        if result.get("copiesSetAside"):
            say(f"set aside: {result['copiesSetAside']} file(s) that were copies of other peers' work the "
                f"remote no longer holds (their authors republish them), in {result['copiesDir']}")
        print_counts(result)

    emit(state, result, human)


@setup.command("s3")
@_shared_options
@click.option("--region", help="The bucket's region.")
@global_options
@click.pass_obj
def setup_s3(state: CliState, bucket, prefix, namespace, endpoint_url, hydration, region, create_bucket):
    """Share the datastore through S3 or an S3-compatible server. Credentials
    come from the usual AWS environment variables and files.

    Example: swamp datastore setup s3 --bucket acme-swamp --region eu-west-1"""
    _run_setup(state, type="s3", bucket=bucket, prefix=prefix, namespace=namespace,
               endpointUrl=endpoint_url, region=region, hydration=hydration, create_bucket=create_bucket)


@setup.command("gcs")
@_shared_options
@global_options
@click.pass_obj
def setup_gcs(state: CliState, bucket, prefix, namespace, endpoint_url, hydration, create_bucket):
    """Share the datastore through Google Cloud Storage. Credentials come from
    the usual application-default credentials.

    Example: swamp datastore setup gcs --bucket acme-swamp"""
    _run_setup(state, type="gcs", bucket=bucket, prefix=prefix, namespace=namespace,
               endpointUrl=endpoint_url, hydration=hydration, create_bucket=create_bucket)


@datastore.command("status")
@global_options
@click.pass_obj
def status(state: CliState):
    """Show the datastore, its sync head and local changes.

    Example: swamp datastore status --json"""
    from swamp.app.datastore import status as run

    result = run(state.repo())

    def human():
        shared = result.get("type") != "filesystem"
        where = result["location"] + (f" (namespace {result['namespace']})" if result.get("namespace") else "")
        if not shared:
            summary([("datastore", f"{result['type']} at {where}"),
                     ("shared", "no: every change is local; share it with 'swamp datastore setup s3|gcs ...'")])
            return
        dirty = result.get("dirtyFiles", 0)
        conflicts = result.get("conflicts") or []
        summary([
            ("datastore", f"{result['type']} at {where}"),
            ("cache", result.get("cache")),
            ("head", f"commit {result['head']}"),
            ("peer", result.get("peer")),
            ("hydration", result.get("hydration")),
            ("unpublished", f"{dirty} change(s) made here are not published yet; 'swamp datastore sync' publishes them"
             if dirty
             else "nothing; everything made here is published"),
            ("conflicts", f"{len(conflicts)} copy(ies) kept aside; 'swamp datastore conflicts' lists them"
             if conflicts else "none"),
        ])
        for path in result.get("dirtyPaths", [])[:20]:
            say(f"  {path}")
        if dirty > 20:
            say(f"  ... and {dirty - 20} more (--json lists them all)")

    emit(state, result, human)


from swamp.cli.datastore_sync import print_counts  # noqa: E402  (shared with setup's output)


@datastore.command("sync")
@click.option("--pull", "pull_only", is_flag=True, help="Only pull.")
@click.option("--push", "push_only", is_flag=True, help="Only push.")
@global_options
@click.pass_obj
def sync(state: CliState, pull_only, push_only):
    """Pull peers' commits and push local changes.

    Example: swamp datastore sync --pull"""
    from swamp.cli import datastore_sync

    datastore_sync.run(state, pull_only, push_only)  # also the fast lane's (cli/fast_lane.py)


@datastore.group("lock")
def lock():
    """Inspect and break locks and leases.

    Example: swamp datastore lock status"""


@lock.command("status")
@global_options
@click.pass_obj
def lock_status(state: CliState):
    """List held locks and leases with their holders.

    Example: swamp datastore lock status"""
    from swamp.app.datastore import lock_status as run

    rows = run(state.repo())
    emit(state, rows, lambda: table(rows, ["name", "holder", "pid", "acquiredAt", "stale"]))


@lock.command("release")
@click.argument("name")
@click.option("--force", is_flag=True, required=True, help="Required: breaking a lock is never implicit.")
@global_options
@click.pass_obj
def lock_release(state: CliState, name, force):
    """Break the lock NAME (for a holder that died).

    Example: swamp datastore lock release workflow-run/3f2a9c1e --force"""
    from swamp.app.datastore import lock_release as run

    from swamp.errors import NotFoundError

    result = run(state.repo(), name)
    if not result["released"]:
        raise NotFoundError(f"no lock or lease named {name!r} is held",
                            hint="see which are held with 'swamp datastore lock status'")
    emit(state, result, f"released {name}")


@datastore.command("log")
@click.option("--limit", type=int, default=20, show_default=True, help="How many commits (newest first).")
@global_options
@click.pass_obj
def log(state: CliState, limit):
    """The shared history: who changed what, when.

    Example: swamp datastore log --limit 5"""
    from swamp.app.datastore import history

    rows = history(state.repo(), limit)

    def human():
        for c in rows:
            w = c["writer"]
            say(f"{c['seq']:>6}  {c['time']}  {w.get('peer')}@{w.get('host')}  {c['command'] or '-'}  "
                f"({len(c['changes'])} changes)")

    emit(state, rows, human)


@datastore.command("verify")
@global_options
@click.pass_obj
def verify(state: CliState):
    """Check that the log has no gaps and every blob matches its hash.

    Example: swamp datastore verify"""
    from swamp.app.datastore import verify as run

    result = run(state.repo())

    def human():
        say(f"{'ok' if result['ok'] else 'PROBLEMS'}: {result['commits']} commits, "
            f"{result['checkpoints']} checkpoints, {result['blobs']} blobs")
        for e in result["errors"]:
            say(f"  {e}")

    emit(state, result, human)
    if not result["ok"]:
        sys.exit(1)


@datastore.command("gc")
@click.option("--retention-days", type=float, default=30, show_default=True,
              help="Keep every commit and checkpoint this recent, and what they reference.")
@click.option("--dry-run", is_flag=True, help="Only report what would go.")
@global_options
@click.pass_obj
def gc(state: CliState, retention_days, dry_run):
    """Trim the shared log and unreferenced blobs (in two phases: mark, then
    sweep after a grace period, so a push in flight never loses a blob).

    Example: swamp datastore gc --dry-run"""
    from swamp.app.datastore import collect

    result = collect(state.repo(), retention_days=retention_days, dry_run=dry_run)
    emit(state, result)


@datastore.group("conflicts", invoke_without_command=True)
@global_options
@click.pass_context
def conflicts(ctx: click.Context, **_):
    """List, restore or drop the conflict copies a sync kept aside.

    Example: swamp datastore conflicts"""
    if ctx.invoked_subcommand is None:
        ctx.invoke(conflicts_list)


@conflicts.command("list")
@global_options
@click.pass_obj
def conflicts_list(state: CliState):
    """List every conflict copy, with the path and commit it conflicts with.

    Example: swamp datastore conflicts list --json"""
    from swamp.app.datastore_conflicts import list_conflicts

    rows = list_conflicts(state.repo())

    def human():
        if not rows:
            say("no conflict copies")
            return
        table([{**r, "theirs": ("same as ours" if r["same"] else "present") if r["theirs"] else "deleted"}
               for r in rows], ["path", "copy", "class", "seq", "theirs"],
              ["PATH", "OUR COPY", "CLASS", "THEIR COMMIT", "THEIRS NOW"])
        say("restore one with 'swamp datastore conflicts restore PATH', or drop it with "
            "'swamp datastore conflicts drop PATH'")

    emit(state, rows, human)


@conflicts.command("restore")
@click.argument("path")
@global_options
@click.pass_obj
def conflicts_restore(state: CliState, path):
    """Put our copy PATH (or the one copy of PATH) in place of theirs, and publish it.

    Example: swamp datastore conflicts restore config/shared.json"""
    from swamp.app.datastore_conflicts import restore

    result = restore(state.repo(), path)
    emit(state, result, f"restored {result['restored']} over {result['path']}")


@conflicts.command("drop")
@click.argument("path")
@global_options
@click.pass_obj
def conflicts_drop(state: CliState, path):
    """Delete our copy PATH (or the one copy of PATH); theirs stays.

    Example: swamp datastore conflicts drop config/shared.json"""
    from swamp.app.datastore_conflicts import drop

    result = drop(state.repo(), path)
    emit(state, result, f"dropped {result['dropped']}")


from swamp.cli.datastore_admin import COMMANDS as _ADMIN_COMMANDS  # noqa: E402  (namespace, compact, type)

for _command in _ADMIN_COMMANDS:
    datastore.add_command(_command)

from swamp.cli.datastore_config import config as _config  # noqa: E402  (managed config: migrate, status)

datastore.add_command(_config)

from swamp.cli.datastore_upgrade import upgrade as _upgrade  # noqa: E402  (sync format 1 -> this one)

datastore.add_command(_upgrade)
