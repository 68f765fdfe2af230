"""Groups (``access/groups.json``): a name and its members, each a person
or a token; a grant naming ``group:NAME`` applies to every member
(access/grants.with_groups). What a groups map must look like before it is
written, and a group as the commands show it."""

from __future__ import annotations

from swamp.errors import ValidationError
from swamp.util.names import check_name

#: who may be a member of a group: a person or a token (not another group: no cycles to follow)
MEMBER_KINDS = ("user", "token")


def check_member(member: str) -> str:
    kind, sep, name = member.partition(":")
    if kind not in MEMBER_KINDS or not sep or not name:
        raise ValidationError(f"member {member!r} must be user:NAME or token:NAME")
    return member


def check_groups(entries: dict) -> None:
    """The whole groups map, as it is about to be written."""
    for name, group in entries.items():
        check_name(name, "group name")
        members = group.get("members", {})
        if set(group) - {"members", "description", "createdAt"} or not isinstance(members, dict):
            raise ValidationError(f"group {name!r} would be written in the wrong shape")
        for m, v in members.items():
            check_member(m)
            if v is not True:
                raise ValidationError(f"group {name!r}: member {m!r} must map to true")


def group_row(name: str, group: dict) -> dict:
    return {"name": name, "members": sorted(group.get("members") or {}),
            "description": group.get("description"), "createdAt": group.get("createdAt")}
