"""``swamp access grant``, ``swamp access group`` and ``swamp access
check``: grants and groups kept in the datastore, so every serve replica
enforces the same (docs/serve.md#access). On a checkout: whoever can
change the repository's datastore can change them. With ``--server``
(the ``remote_*`` handlers, listed in cli/remote.py): the server does it,
for a token with ``admin`` on ``access:grants`` or ``access:groups``; the
output is the same. Registered on the ``access`` group at the end of
cli/access.py."""

from __future__ import annotations

import sys

import click

from swamp.cli.options import CliState, global_options
from swamp.cli.output import emit, say, table
from swamp.cli.remote_handlers import runs_on_server

_ACTIONS = "read, run, approve, write, admin"


def _actions(value: str) -> list[str]:
    return [a.strip() for a in value.split(",") if a.strip()]


# ------------------------------------------------------------------ grants
@click.group("grant")
def grant():
    """Grants made by command, kept in the datastore for every replica.

    Example: swamp access grant create --subject group:deployers --allow read,run --on 'workflow:deploy-*'"""


@grant.command("create")
@click.option("--subject", "subjects", multiple=True, required=True, metavar="KIND:NAME",
              help="Who: token:NAME, user:NAME or group:NAME; repeatable.")
@click.option("--allow", metavar="ACTIONS", help=f"Actions to allow, comma-separated ({_ACTIONS}).")
@click.option("--deny", metavar="ACTIONS", help="Actions to deny, comma-separated (a deny wins over any allow).")
@click.option("--on", "resources", multiple=True, required=True, metavar="RESOURCE",
              help="workflow:NAME, model:NAME, data:MODEL/NAME or vault:NAME, with shell globs; repeatable.")
@click.option("--description", help="Why the grant exists, shown by list.")
@click.option("--when", metavar="CONDITION", hidden=True)
@global_options
@click.pass_obj
def grant_create(state: CliState, subjects, allow, deny, resources, description, when):
    """Create a grant. Creating the same grant again changes nothing.

    \b
    Example: swamp access grant create --subject group:deployers --allow read,run --on 'workflow:deploy-*'
    Example: swamp access grant create --subject token:intern --deny run --on workflow:deploy-prod"""
    from swamp.app.access_admin import create_grant

    wanted = _new_grant(subjects, allow, deny, resources, description, when)
    _show_grant(state, create_grant(state.repo(), **wanted))


def _new_grant(subjects, allow, deny, resources, description, when) -> dict:
    from swamp.errors import UsageError

    if when is not None:
        raise UsageError("--when conditions are not supported: a grant matches on subject, action and resource",
                         hint="narrow --on instead (shell globs), or add a deny grant")
    if bool(allow) == bool(deny):
        raise UsageError("give one of --allow ACTIONS or --deny ACTIONS", hint=f"actions: {_ACTIONS}")
    return {"subjects": list(subjects), "effect": "allow" if allow else "deny", "actions": _actions(allow or deny),
            "resources": list(resources), "description": description}


def _show_grant(state: CliState, result: dict) -> None:
    emit(state, result, f"{'created' if result['created'] else 'already there:'} grant {result['id']} "
                        f"({result['effect']} {','.join(result['actions'])} on {', '.join(result['resources'])} "
                        f"for {', '.join(result['subjects'])})")


@grant.command("list")
@click.option("--subject", metavar="KIND:NAME", help="Only the grants naming this subject.")
@click.option("--on", metavar="RESOURCE", help="Only the grants naming this resource (exactly).")
@global_options
@click.pass_obj
def grant_list(state: CliState, subject, on):
    """Every grant a server of this checkout enforces: grants/*.yaml and the datastore's.

    \b
    Example: swamp access grant list
    Example: swamp access grant list --subject group:deployers --json"""
    from swamp.app.access_admin import list_grants

    _show_grants(state, list_grants(state.repo(), subject=subject, on=on))


def _show_grants(state: CliState, rows: list[dict]) -> None:
    shown = [{k: ", ".join(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows]
    emit(state, rows, lambda: table(shown, ["id", "effect", "subjects", "actions", "resources", "source"]))


@grant.command("revoke")
@click.argument("grant_id")
@global_options
@click.pass_obj
def grant_revoke(state: CliState, grant_id):
    """Revoke a grant made by 'access grant create' (one in grants/*.yaml is removed from its file).

    Example: swamp access grant revoke g-1a2b3c4d5e6f"""
    from swamp.app.access_admin import revoke_grant

    result = revoke_grant(state.repo(), grant_id)
    emit(state, result, f"revoked grant {grant_id}")


# ------------------------------------------------------------------ groups
@click.group("group")
def group():
    """Groups of users and tokens; a grant naming group:NAME applies to each member.

    Example: swamp access group create deployers"""


def _show_group(state: CliState, row: dict, text: str) -> None:
    emit(state, row, f"{text} ({len(row['members'])} member(s))")


@group.command("create")
@click.argument("name")
@click.option("--description", help="What the group is for.")
@global_options
@click.pass_obj
def group_create(state: CliState, name, description):
    """Create an empty group NAME.

    Example: swamp access group create deployers"""
    from swamp.app.access_admin import create_group

    _show_group(state, create_group(state.repo(), name, description=description), f"created group {name}")


@group.command("add-member")
@click.argument("group_name", metavar="GROUP")
@click.argument("member", metavar="MEMBER")
@global_options
@click.pass_obj
def group_add_member(state: CliState, group_name, member):
    """Add MEMBER (user:NAME or token:NAME) to GROUP.

    Example: swamp access group add-member deployers user:alice"""
    from swamp.app.access_admin import add_member

    _show_group(state, add_member(state.repo(), group_name, member), f"{member} is in {group_name}")


@group.command("remove-member")
@click.argument("group_name", metavar="GROUP")
@click.argument("member", metavar="MEMBER")
@global_options
@click.pass_obj
def group_remove_member(state: CliState, group_name, member):
    """Remove MEMBER from GROUP.

    Example: swamp access group remove-member deployers user:alice"""
    from swamp.app.access_admin import remove_member

    _show_group(state, remove_member(state.repo(), group_name, member), f"{member} left {group_name}")


@group.command("list")
@global_options
@click.pass_obj
def group_list(state: CliState):
    """Every group, with its members.

    Example: swamp access group list --json"""
    from swamp.app.access_admin import list_groups

    _show_groups(state, list_groups(state.repo()))


def _show_groups(state: CliState, rows: list[dict]) -> None:
    shown = [{**r, "members": ", ".join(r["members"])} for r in rows]
    emit(state, rows, lambda: table(shown, ["name", "members", "description"]))


@group.command("members")
@click.argument("name")
@global_options
@click.pass_obj
def group_members(state: CliState, name):
    """The members of group NAME, sorted.

    Example: swamp access group members deployers"""
    from swamp.app.access_admin import group_members as members

    _show_members(state, members(state.repo(), name))


def _show_members(state: CliState, row: dict) -> None:
    emit(state, row, lambda: [say(m) for m in row["members"]] if row["members"] else
         say(f"{row['name']} has no members"))


@group.command("list-idp")
@global_options
@click.pass_obj
def group_list_idp(state: CliState):
    """Groups from an identity provider: none can be configured here, so it says so.

    Example: swamp access group list-idp"""
    doc = {"identityProvider": None, "groups": [],
           "message": "no identity provider is configured: groups are local to the datastore "
                      "(swamp access group list)"}
    emit(state, doc, doc["message"])


# ------------------------------------------------------------------ check
@click.command("check")
@click.option("--subject", "subjects", multiple=True, metavar="KIND:NAME",
              help="As this subject (token:, user: or group:); repeatable.")
@click.option("--action", required=True, type=click.Choice(["read", "run", "approve", "write", "admin"]),
              help="The action to check.")
@click.option("--on", "resource", required=True, metavar="RESOURCE", help="The resource, e.g. workflow:deploy.")
@click.option("--groups", metavar="G1,G2", help="Also as members of these groups (comma-separated).")
@global_options
@click.pass_obj
def check(state: CliState, subjects, action, resource, groups):
    """Explain a decision: whether ACTION on RESOURCE is allowed for --subject
    or --token NAME (its user and groups too), which grant decided, and every
    grant that matched. Exits 0 when allowed, 1 when not.

    \b
    Example: swamp access check --subject user:alice --action run --on workflow:deploy
    Example: swamp access check --token ci --action read --on data:hello/result --json"""
    from swamp.app.access_admin import explain
    from swamp.app.access_tokens import subjects_for_name

    repo = state.repo()
    who = _check_subjects(subjects, groups)
    if state.token:  # a token's name (or the token itself: its name is before the dot)
        who += subjects_for_name(repo, state.token.split(".", 1)[0])
    _show_check(state, explain(repo, subjects=who, action=action, resource=resource))


def _check_subjects(subjects, groups) -> list[str]:
    return list(subjects) + [f"group:{g.strip()}" for g in (groups or "").split(",") if g.strip()]


def _show_check(state: CliState, result: dict) -> None:
    def human():
        say(f"{'yes' if result['allowed'] else 'no'}: {result['reason']}")
        for g in result["matched"]:
            say(f"  matched {g['id']} ({g['effect']} {','.join(g['actions'])} on {', '.join(g['resources'])}) "
                f"in {g['source']}")

    emit(state, result, human)
    if not result["allowed"]:
        sys.exit(1)


# ------------------------------------------------------------------ --server (cli/remote_handlers.py)
def _q(value: str) -> str:
    import urllib.parse

    return urllib.parse.quote(value, safe="")


@runs_on_server("access grant create", {"subjects", "allow", "deny", "resources", "description", "when"})
def remote_grant_create(client, state, p: dict) -> None:
    wanted = _new_grant(p["subjects"], p["allow"], p["deny"], p["resources"], p["description"], p["when"])
    _show_grant(state, client.call("POST", "/access/grants", {k: v for k, v in wanted.items() if v is not None})[1])


@runs_on_server("access grant list", {"subject", "on"})
def remote_grant_list(client, state, p: dict) -> None:
    _show_grants(state, client.call("GET", "/access/grants", query={"subject": p["subject"], "on": p["on"]})[1])


@runs_on_server("access grant revoke", {"grant_id"})
def remote_grant_revoke(client, state, p: dict) -> None:
    emit(state, client.call("DELETE", f"/access/grants/{_q(p['grant_id'])}")[1], f"revoked grant {p['grant_id']}")


@runs_on_server("access group create", {"name", "description"})
def remote_group_create(client, state, p: dict) -> None:
    body = {"name": p["name"], **({"description": p["description"]} if p["description"] else {})}
    _show_group(state, client.call("POST", "/access/groups", body)[1], f"created group {p['name']}")


def remote_membership(client, state, p: dict, add: bool) -> None:
    verb = "add-member" if add else "remove-member"
    row = client.call("POST", f"/access/groups/{_q(p['group_name'])}/{verb}", {"member": p["member"]})[1]
    _show_group(state, row, f"{p['member']} is in {p['group_name']}" if add else
                f"{p['member']} left {p['group_name']}")


@runs_on_server("access group add-member", {"group_name", "member"})
def remote_add_member(client, state, p: dict) -> None:
    remote_membership(client, state, p, True)


@runs_on_server("access group remove-member", {"group_name", "member"})
def remote_remove_member(client, state, p: dict) -> None:
    remote_membership(client, state, p, False)


@runs_on_server("access group list")
def remote_group_list(client, state, p: dict) -> None:
    _show_groups(state, client.call("GET", "/access/groups")[1])


@runs_on_server("access group members", {"name"})
def remote_group_members(client, state, p: dict) -> None:
    _show_members(state, client.call("GET", f"/access/groups/{_q(p['name'])}")[1])


@runs_on_server("access check", {"subjects", "action", "resource", "groups"})
def remote_check(client, state, p: dict) -> None:
    from swamp.errors import UsageError

    who = _check_subjects(p["subjects"], p["groups"])
    if not who:  # --token is the credential for --server, not the subject asked about
        raise UsageError("say who with --subject KIND:NAME (with --server, --token is your credential)")
    _show_check(state, client.call("POST", "/access/check",
                                   {"subjects": who, "action": p["action"], "resource": p["resource"]})[1])
