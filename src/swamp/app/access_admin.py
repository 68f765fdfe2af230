"""Administering access from a checkout: grants made by command, groups,
and explaining a decision. What is written goes to the datastore's access
documents (``repo/access_docs.py``) through ``app/access.py``, checked
whole before the write, so that a server never meets a document it would
refuse; the grants of ``grants/*.yaml`` are listed and explained but only
changed by editing their file. The rules they apply are swamp/access/
(grants.py, groups.py); this module is what the CLI's ``access grant|group|
check|can-i`` and serve's access routes (serve/access_routes.py) call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.access import grants as grant_rules
from swamp.access import groups as group_rules
from swamp.errors import ConflictError, NotFoundError, UsageError
from swamp.util.names import check_name

if TYPE_CHECKING:
    from swamp.repo.context import Repo

# ------------------------------------------------------------------ grants
def load_grants(repo: Repo) -> list[grant_rules.Grant]:
    """Every grant a server of this checkout enforces: the files' and the
    datastore's (pulled first)."""
    from swamp.app.access import read

    return grant_rules.load_files(repo) + grant_rules.parse_entries(read(repo, "grants"))


def create_grant(repo: Repo, *, subjects: list[str], effect: str, actions: list[str], resources: list[str],
                 description: str | None = None) -> dict:
    """A grant in the datastore; the same grant created again is not doubled."""
    from swamp.app.access import change

    entry = {"effect": effect, "subjects": sorted(set(subjects)), "actions": sorted(set(actions)),
             "resources": sorted(set(resources))}
    if description:
        entry["description"] = description
    grant = grant_rules.parse_one(entry, "the new grant", grant_rules.DATASTORE_SOURCE)

    def edit(entries: dict) -> dict:
        created = grant.id not in entries
        entries[grant.id] = grant.to_entry()
        return {**grant.to_json(), "created": created}

    return change(repo, "grants", f"access grant create {grant.id}", edit, grant_rules.parse_entries)


def list_grants(repo: Repo, *, subject: str | None = None, on: str | None = None) -> list[dict]:
    """Every grant (files' and datastore's), sorted by source then id;
    ``subject`` and ``on`` keep those naming exactly that subject or resource."""
    rows = [g.to_json() for g in load_grants(repo)
            if (subject is None or subject in g.subjects) and (on is None or on in g.resources)]
    return sorted(rows, key=lambda r: (r["source"], r["id"]))


def revoke_grant(repo: Repo, grant_id: str) -> dict:
    from swamp.app.access import change, read

    if grant_id not in read(repo, "grants"):
        in_file = [g for g in grant_rules.load_files(repo) if g.id == grant_id]
        if in_file:
            raise ConflictError(f"grant {grant_id} is in {in_file[0].source}, not made by 'access grant create'",
                                hint=f"remove it from {in_file[0].source} (in git), then 'swamp access reload'")
        raise NotFoundError(f"no grant {grant_id}", hint="see them with 'swamp access grant list'")

    def edit(entries: dict) -> dict:
        entry = entries.pop(grant_id, None)
        if entry is None:  # revoked by another process in the meantime
            raise NotFoundError(f"no grant {grant_id}", hint="see them with 'swamp access grant list'")
        return {**grant_rules.parse_one(entry, grant_id, grant_rules.DATASTORE_SOURCE).to_json(), "revoked": True}

    return change(repo, "grants", f"access grant revoke {grant_id}", edit, grant_rules.parse_entries)


# ------------------------------------------------------------------ groups
def create_group(repo: Repo, name: str, *, description: str | None = None) -> dict:
    from swamp.app.access import change
    from swamp.util import clock

    check_name(name, "group name")

    def edit(entries: dict) -> dict:
        if name in entries:
            raise ConflictError(f"a group named {name!r} exists",
                                hint=f"add members with 'swamp access group add-member {name} user:NAME'")
        entries[name] = {"members": {}, "createdAt": clock.isoformat(),
                         **({"description": description} if description else {})}
        return group_rules.group_row(name, entries[name])

    return change(repo, "groups", f"access group create {name}", edit, group_rules.check_groups)


def _membership(repo: Repo, group: str, member: str, add: bool) -> dict:
    from swamp.app.access import change

    group_rules.check_member(member)
    verb = "add-member" if add else "remove-member"

    def edit(entries: dict) -> dict:
        if group not in entries:
            raise NotFoundError(f"no group named {group!r}",
                                hint=f"create it with 'swamp access group create {group}'")
        members = entries[group].setdefault("members", {})
        if add:
            members[member] = True  # a map: two peers adding different members merge cleanly
        elif members.pop(member, None) is None:
            raise NotFoundError(f"{member} is not a member of {group}",
                                hint=f"see them with 'swamp access group members {group}'")
        return group_rules.group_row(group, entries[group])

    return change(repo, "groups", f"access group {verb} {group} {member}", edit, group_rules.check_groups)


def add_member(repo: Repo, group: str, member: str) -> dict:
    return _membership(repo, group, member, add=True)


def remove_member(repo: Repo, group: str, member: str) -> dict:
    return _membership(repo, group, member, add=False)


def list_groups(repo: Repo) -> list[dict]:
    from swamp.app.access import read

    return [group_rules.group_row(n, g) for n, g in sorted(read(repo, "groups").items())]


def group_members(repo: Repo, name: str) -> dict:
    from swamp.app.access import read

    groups = read(repo, "groups")
    if name not in groups:
        raise NotFoundError(f"no group named {name!r}", hint="see them with 'swamp access group list'")
    return group_rules.group_row(name, groups[name])


# ------------------------------------------------------------------ explaining
def explain(repo: Repo, *, subjects: list[str], action: str, resource: str) -> dict:
    """Whether the grants allow ``action`` on ``resource`` for these
    subjects (and their groups), which grant decided, and every grant that
    matched."""
    from swamp.app.access import read

    if not subjects:
        raise UsageError("say who: --subject KIND:NAME or --token NAME")
    for s in subjects:
        grant_rules.check_subject(s)
    if action not in grant_rules.ACTIONS:
        raise UsageError(f"unknown action {action!r}", hint=f"actions: {', '.join(grant_rules.ACTIONS)}")
    every = load_grants(repo)
    who = grant_rules.with_groups(subjects, read(repo, "groups"))
    allowed, grant = grant_rules.decide(every, who, action, resource)
    matched = [g.to_json() for g in every if g.matches(who, action, resource)]
    if grant is None:
        reason = f"no grant allows {action} on {resource} for {', '.join(who)}: nothing is allowed without one"
    elif allowed:
        reason = f"allowed by grant {grant.id} in {grant.source}"
    else:
        reason = f"denied by grant {grant.id} in {grant.source} (a deny wins over any allow)"
    return {"allowed": allowed, "action": action, "resource": resource, "subjects": who,
            "decidedBy": grant.to_json() if grant else None, "matched": matched, "reason": reason}


def can_i(repo: Repo, *, subjects: list[str], action: str, resource: str) -> dict:
    """``access can-i``: whether the grants allow ``action`` on ``resource``
    for these subjects (and their groups), and the grant that decided."""
    from swamp.app.access import read

    who = grant_rules.with_groups(subjects, read(repo, "groups"))
    allowed, grant = grant_rules.decide(load_grants(repo), who, action, resource)
    return {"allowed": allowed, "action": action, "resource": resource, "subjects": who,
            "decidedBy": grant.to_json() if grant else None}
