"""Access administration over HTTP, for ``swamp access grant|group|check
--server URL``: the same use cases as on a checkout (app/access_admin.py),
run on the server's. Each needs ``admin`` on ``access:grants`` (grants and
``check``, which shows them) or ``access:groups``; grants/*.yaml are never
changed here. serve/routes.py makes its routes from ``SPECS`` (this module
imports nothing of it: the table imports this one)."""

from __future__ import annotations

from typing import Any

Call = Any  # serve.calls.Call


def _strings(call: Call, key: str) -> list[str]:
    from swamp.errors import ValidationError

    value = call.body.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValidationError(f"{key} must be a non-empty list of strings")
    return value


def grant_create(call: Call) -> dict:
    from swamp.app.access_admin import create_grant

    return create_grant(call.repo, subjects=_strings(call, "subjects"), effect=call.body.get("effect", "allow"),
                        actions=_strings(call, "actions"), resources=_strings(call, "resources"),
                        description=call.body.get("description"))


def grant_list(call: Call) -> list:
    from swamp.app.access_admin import list_grants

    return list_grants(call.repo, subject=call.query.get("subject"), on=call.query.get("on"))


def grant_revoke(call: Call) -> dict:
    from swamp.app.access_admin import revoke_grant

    return revoke_grant(call.repo, call.path["id"])


def check(call: Call) -> dict:
    from swamp.app.access_admin import explain

    return explain(call.repo, subjects=_strings(call, "subjects"), action=call.body.get("action", ""),
                   resource=call.body.get("resource", ""))


def group_create(call: Call) -> dict:
    from swamp.app.access_admin import create_group

    return create_group(call.repo, call.body["name"], description=call.body.get("description"))


def group_list(call: Call) -> list:
    from swamp.app.access_admin import list_groups

    return list_groups(call.repo)


def group_members(call: Call) -> dict:
    from swamp.app.access_admin import group_members as members

    return members(call.repo, call.path["group"])


def _membership(add: bool):
    def run(call: Call) -> dict:
        from swamp.app.access_admin import add_member, remove_member

        return (add_member if add else remove_member)(call.repo, call.path["group"], call.body["member"])

    return run


_GRANTS = "access:grants"
_GROUPS = "access:groups"
_MEMBER = {"member": (str, True, "user:NAME or token:NAME")}

#: (method, path under /api/v1, op, summary, handler, the resource admin is needed on, query, body, changes)
SPECS = [
    ("GET", "/access/grants", "listGrants", "Every grant: grants/*.yaml and the datastore's", grant_list, _GRANTS,
     {"subject": (str, "only grants naming this subject"), "on": (str, "only grants naming this resource")},
     None, False),
    ("POST", "/access/grants", "createGrant", "Create a grant in the datastore (the same again: no change)",
     grant_create, _GRANTS, {},
     {"subjects": (list, True, "token:NAME, user:NAME or group:NAME"),
      "effect": (str, False, "allow (default) or deny"),
      "actions": (list, True, "read, run, approve, write, admin"),
      "resources": (list, True, "workflow:NAME, model:NAME, data:MODEL/NAME, vault:NAME (globs)"),
      "description": (str, False, "why it exists")}, True),
    ("DELETE", "/access/grants/{id}", "revokeGrant", "Revoke a grant made by command", grant_revoke, _GRANTS,
     {}, None, True),
    ("POST", "/access/check", "checkAccess", "Explain a decision: the grant that decided, those that matched",
     check, _GRANTS, {},
     {"subjects": (list, True, "token:, user: or group: subjects"),
      "action": (str, True, "read, run, approve, write or admin"),
      "resource": (str, True, "e.g. workflow:deploy")}, False),
    ("GET", "/access/groups", "listGroups", "Every group, with its members", group_list, _GROUPS, {}, None, False),
    ("POST", "/access/groups", "createGroup", "Create an empty group", group_create, _GROUPS, {},
     {"name": (str, True, "the group's name"), "description": (str, False, "what it is for")}, True),
    ("GET", "/access/groups/{group}", "groupMembers", "One group and its members", group_members, _GROUPS,
     {}, None, False),
    ("POST", "/access/groups/{group}/add-member", "addGroupMember", "Add a member to a group", _membership(True),
     _GROUPS, {}, _MEMBER, True),
    ("POST", "/access/groups/{group}/remove-member", "removeGroupMember", "Remove a member of a group",
     _membership(False), _GROUPS, {}, _MEMBER, True),
]
