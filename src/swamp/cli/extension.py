from __future__ import annotations

import json
import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table


@click.group()
def extension():
    """Model types from Python packages, pinned in a lockfile the team shares.

    Example: swamp extension list"""


_index = click.option("--index", "index", metavar="URL",
                      help="A PEP 503/691 index (or a directory of wheels); else the trusted ones.")


@extension.command("pull")
@click.argument("spec", metavar="NAME[==VERSION]")
@_index
@click.option("--move", is_flag=True,
              help="Take a pinned extension from --index instead of the index it is pinned to (recorded).")
@global_options
@click.pass_obj
def pull(state: CliState, spec, index, move):
    """Install an extension (the newest version, or VERSION) and pin it.

    A pinned extension comes only from the index it is pinned to; --index URL
    --move takes it from another one.

    Example: swamp extension pull acme-tools==1.2.0 --index https://pypi.example.com/simple/"""
    from swamp.app.extensions import pull as pull_

    r = pull_(state.repo(), spec, index=index, move=move)
    if r["proposed"]:
        emit(state, r, f"proposed {r['name']} {r['version']} ({_kinds(r)}); extensions.requireApproval is set, "
                       f"so it is pinned once a second identity runs 'swamp extension approve {r['name']}'")
        return
    emit(state, r, f"{'pinned' if r['changed'] else 'already pinned'} {r['name']} {r['version']} "
                   f"({_kinds(r)}) in {r['lockfile']}")


def _kinds(r: dict) -> str:
    """Its model types, then its vault and report types, labelled."""
    return ", ".join([*r.get("types", []), *(f"vault type {t}" for t in r.get("vaultTypes", [])),
                      *(f"report {t}" for t in r.get("reportTypes", []))])


@extension.command("rm")
@click.argument("name")
@global_options
@click.pass_obj
def rm(state: CliState, name):
    """Unpin an extension and remove its install here.

    Example: swamp extension rm acme-tools"""
    from swamp.app.extensions import remove

    r = remove(state.repo(), name)

    def human():
        say(f"removed {r['name']} {r['version']} from {r['lockfile']}")
        if r["usedBy"]:
            say(f"warning: these use its types and will not work: {', '.join(r['usedBy'])}")

    emit(state, r, human)


@extension.command("list")
@global_options
@click.pass_obj
def list_(state: CliState):
    """The pinned extensions, and whether each is installed here.

    Example: swamp extension list --json"""
    from swamp.app.extensions import list_extensions

    r = list_extensions(state.repo())
    rows = [{**e, "types": _kinds(e), "installed": "yes" if e["installed"] else "no"}
            for e in r["extensions"]]
    emit(state, r, lambda: table(rows, ["name", "version", "types", "installed"]) if rows
         else say(f"no extension pinned ({r['lockfile']})"))


@extension.command("install")
@click.option("--reinstall", is_flag=True,
              help="Install every pinned extension again from its pinned wheels (after a changed install was refused).")
@global_options
@click.pass_obj
def install(state: CliState, reinstall):
    """Install exactly what the lockfile pins (every wheel hash-checked).

    Example: swamp extension install"""
    from swamp.app.extensions import install_all

    r = install_all(state.repo(), reinstall=reinstall)
    emit(state, r, f"installed {len(r['installed'])}, already installed {len(r['alreadyInstalled'])}, "
                   f"removed {len(r['removed'])}")


@extension.command("update")
@click.argument("name", required=False)
@click.option("--check", is_flag=True, help="Only say what would be updated.")
@global_options
@click.pass_obj
def update(state: CliState, name, check):
    """Move pinned extensions (or NAME) to the newest version on their index.

    Example: swamp extension update acme-tools --check"""
    from swamp.app.extensions import update as update_

    r = update_(state.repo(), name, check=check)

    def human():
        if not r["updates"]:
            say("everything is up to date")
        proposed = {p["name"] for p in r.get("proposed", [])}
        for u in r["updates"]:
            say(f"{u['name']}: {u['from']} -> {u['to']}" + (" (not updated: --check)" if check else "")
                + (" (proposed: waits for 'swamp extension approve " + u["name"] + "')"
                   if u["name"] in proposed else ""))

    emit(state, r, human)


@extension.command("history")
@click.argument("name", required=False)
@global_options
@click.pass_obj
def history(state: CliState, name):
    """Every change of the pins (of NAME), oldest first: who, when, what, from
    which index; and the proposed changes waiting for approval.

    Example: swamp extension history acme-tools --json"""
    from swamp.app.extension_review import history_of

    r = history_of(state.repo(), name)

    def human():
        rows = [{"at": c["at"], "by": c["by"], "action": c["action"],
                 "what": c.get("name") or c.get("index") or c.get("setting", ""), "change": _change_text(c)}
                for c in r["changes"]]
        if rows:
            table(rows, ["at", "by", "action", "what", "change"])
        else:
            say("no extension change recorded")
        for p in r["pending"]:
            say(f"waiting for approval: {p['name']} {_change_text(p)} ({p.get('proposes')}), proposed by {p['by']}; "
                f"a second identity approves it with 'swamp extension approve {p['name']}'")
        for u in r["unreadable"]:
            say(f"warning: {u} is not a change record (ignored)")

    emit(state, r, human)


def _change_text(c: dict) -> str:
    old, new = c.get("from"), c.get("to")

    def pin(p):
        sha = (p.get("sha256") or "")[:12]
        return f"{p['version']} ({p['index']}{', sha256 ' + sha if sha else ''})"

    if old and new:
        return f"{pin(old)} -> {pin(new)}"
    if new:
        return f"-> {pin(new)}"
    if old:
        return f"{pin(old)} ->"
    if c.get("setting"):
        return "unset" if c.get("value") is None else f"= {json.dumps(c['value'])}"
    return ""


@extension.command("approve")
@click.argument("name")
@global_options
@click.pass_obj
def approve(state: CliState, name):
    """Make the proposed change of NAME its pin (by another identity than the proposer's).

    Example: swamp extension approve acme-tools"""
    from swamp.app.extension_review import approve as approve_

    r = approve_(state.repo(), name)
    emit(state, r, f"approved {r['name']} {r['from']} -> {r['to']} (proposed by {r['proposedBy']}) "
                   f"in {r['lockfile']}")


@extension.command("reject")
@click.argument("name")
@global_options
@click.pass_obj
def reject(state: CliState, name):
    """Drop the proposed change of NAME; its pin stays as it is.

    Example: swamp extension reject acme-tools"""
    from swamp.app.extension_review import reject as reject_

    r = reject_(state.repo(), name)
    emit(state, r, f"rejected {r['name']} {r['to']} (proposed by {r['proposedBy']}); still pinned: {r['from']}")


@extension.command("outdated")
@global_options
@click.pass_obj
def outdated(state: CliState):
    """List pinned extensions with a newer version; exits 1 when there is one.

    Example: swamp extension outdated --json"""
    from swamp.app.extensions import outdated as outdated_

    r = outdated_(state.repo())
    rows = [e for e in r["extensions"] if e["outdated"]]
    emit(state, r, lambda: table(rows, ["name", "pinned", "latest"]) if rows else say("everything is up to date"))
    if r["outdated"]:
        sys.exit(1)


@extension.command("search")
@click.argument("query", required=False)
@_index
@global_options
@click.pass_obj
def search(state: CliState, query, index):
    """Find extensions on the index (or the trusted indexes).

    Example: swamp extension search acme"""
    from swamp.app.extensions import search as search_

    r = search_(state.repo(), query, index=index)
    emit(state, r, lambda: table(r["results"], ["name", "latest", "pinned", "index"]) if r["results"]
         else say("nothing found"))


@extension.command("info")
@click.argument("name")
@_index
@global_options
@click.pass_obj
def info(state: CliState, name, index):
    """An extension's versions on its index, and its pin here.

    Example: swamp extension info acme-tools"""
    from swamp.app.extensions import info as info_

    r = info_(state.repo(), name, index=index)

    def human():
        say(f"{r['name']} (index {r['index']})")
        say(f"  latest:   {r['latest'] or '-'}")
        say(f"  versions: {', '.join(r['versions']) or '-'}")
        p = r["pinned"]
        say(f"  pinned:   {p['version'] + ' (' + _kinds(p) + ')' if p else '-'}")
        say(f"  installed here: {'yes' if r['installed'] else 'no'}")

    emit(state, r, human)


@extension.group("trust")
def trust():
    """The indexes searched when no --index is given.

    Example: swamp extension trust list"""


@trust.command("add")
@click.argument("index", metavar="INDEX")
@global_options
@click.pass_obj
def trust_add(state: CliState, index):
    """Trust an index (a PEP 503/691 URL).

    Example: swamp extension trust add https://pypi.example.com/simple/"""
    from swamp.app.extensions import trust_add as add

    r = add(state.repo(), index)
    emit(state, r, f"trusted {r['index']}")


@trust.command("list")
@global_options
@click.pass_obj
def trust_list(state: CliState):
    """The trusted indexes.

    Example: swamp extension trust list"""
    from swamp.app.extensions import trust_list as list_trusted

    r = list_trusted(state.repo())
    emit(state, r, lambda: [say(u) for u in r["trusted"]] if r["trusted"] else say("no index trusted"))


@trust.command("rm")
@click.argument("index", metavar="INDEX")
@global_options
@click.pass_obj
def trust_rm(state: CliState, index):
    """Stop trusting an index.

    Example: swamp extension trust rm https://pypi.example.com/simple/"""
    from swamp.app.extensions import trust_rm as rm_

    r = rm_(state.repo(), index)
    emit(state, r, f"no longer trusted: {r['index']}")


def _repo_or_none(state: CliState):
    """Authoring works outside a repository too (then only --index counts)."""
    from swamp.errors import RepoNotFoundError

    try:
        return state.repo()
    except RepoNotFoundError:
        return None


@extension.command("new")
@click.argument("name")
@click.option("--path", type=click.Path(file_okay=False), help="Where to create it (default: ./NAME).")
@click.option("--vault", is_flag=True, help="One vault type instead of a model type.")
@global_options
@click.pass_obj
def new(state: CliState, name, path, vault):
    """Create a new extension package: pyproject, one model type (or with --vault a vault type), a test, a README.

    Example: swamp extension new acme-tools"""
    from swamp.app.extension_authoring import new as new_

    r = new_(name, path, vault=vault)
    emit(state, r, lambda: [say(f"created {r['path']}")] + [say(f"  {f}") for f in r["files"]])


@extension.command("check")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@_index
@global_options
@click.pass_obj
def check(state: CliState, path, index):
    """Build, load every type in a clean environment, check schemas, method
    descriptions, and that the version is not on the index yet. Exits 1 on
    any problem.

    Example: swamp extension check acme-tools --index https://pypi.example.com/simple/"""
    from swamp.app.extension_authoring import check as check_

    r = check_(_repo_or_none(state), path, index=index)

    def human():
        say(f"{'ok     ' if r['valid'] else 'INVALID'} {r['name']} {r['version']} ({_kinds(r) or 'no type'})")
        for e in r["errors"]:
            say(f"        {e['file']}{':' + str(e['line']) if e.get('line') else ''}: {e['message']}")

    emit(state, r, human)
    if not r["valid"]:
        sys.exit(1)


@extension.command("fmt")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--check", is_flag=True, help="Only check; exit 1 if a file would change.")
@global_options
@click.pass_obj
def fmt(state: CliState, path, check):
    """Format the extension's code with ruff (skipped, saying so, without it).

    Example: swamp extension fmt acme-tools --check"""
    from swamp.app.extension_authoring import fmt as fmt_

    r = fmt_(path, check=check)
    emit(state, r, r["message"] or ("formatted" if r["formatted"] else "nothing to change"))
    if not r["skipped"] and not r["clean"]:
        sys.exit(1)


@extension.command("publish")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@_index
@global_options
@click.pass_obj
def publish(state: CliState, path, index):
    """Check, build and upload to a package index (credentials from
    TWINE_USERNAME/TWINE_PASSWORD, ~/.pypirc or ~/.netrc).

    Example: swamp extension publish acme-tools --index https://pypi.example.com/simple/"""
    from swamp.app.extension_authoring import publish as publish_

    r = publish_(_repo_or_none(state), path, index=index)
    emit(state, r, f"published {r['wheel']} to {r['uploadedTo']}")


@extension.group("source")
def source():
    """Local checkouts whose types load here without publishing (this machine only).

    Example: swamp extension source list"""


@source.command("add")
@click.argument("path", type=click.Path(file_okay=False, exists=True))
@global_options
@click.pass_obj
def source_add(state: CliState, path):
    """Load the extension checked out at PATH (ahead of its pinned version).

    Example: swamp extension source add ../acme-tools"""
    from swamp.app.extension_authoring import source_add as add

    r = add(state.repo(), path)
    emit(state, r, f"loading {r['name']} from {r['path']} ({_kinds(r)})")


@source.command("list")
@global_options
@click.pass_obj
def source_list(state: CliState):
    """The local checkouts loaded here.

    Example: swamp extension source list"""
    from swamp.app.extension_authoring import source_list as list_sources

    r = list_sources(state.repo())
    emit(state, r, lambda: table([{**x, "types": _kinds(x)} for x in r["sources"]], ["name", "path", "types"]) if r["sources"] else say("no source"))


@source.command("rm")
@click.argument("name_or_path", metavar="NAME|PATH")
@global_options
@click.pass_obj
def source_rm(state: CliState, name_or_path):
    """Stop loading a local checkout.

    Example: swamp extension source rm acme-tools"""
    from swamp.app.extension_authoring import source_rm as rm_

    r = rm_(state.repo(), name_or_path)
    emit(state, r, f"no longer loading {r['name']} from {r['path']}")
