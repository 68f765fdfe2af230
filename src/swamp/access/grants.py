"""Grants: who may do what to which resource, in ``grants/*.yaml``::

    grants:
      - subjects: ["token:ci", "group:ops", "user:alice"]   # quoted: YAML
        effect: allow            # or deny
        actions: [read, run]     # read, run, approve, write, admin
        resources: ["workflow:deploy-*", "model:*", "data:hello/*", "vault:*"]

A request is allowed when some grant allows its action on its resource for
one of the caller's subjects and no grant denies it: deny wins, and nothing
is allowed without a grant. ``admin`` stands for every action. Resources
and subjects match with shell globs (``*`` also crosses ``/``). The files
are read again when any of them changes.

``swamp access grant create`` keeps its grants in the datastore instead
(``access/grants.json``, ``repo/access_docs.py``), keyed by an id made from
the grant's content, so that every replica enforces them; groups
(``access/groups.json``, access/groups.py) add ``group:NAME`` to the
subjects of the members they list. A server enforces the files' grants and
the datastore's together (app/enforced_access.py); the use cases that
change and explain them are app/access_admin.py."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import AccessBroken, SwampError, ValidationError

if TYPE_CHECKING:
    from swamp.repo.context import Repo

ACTIONS = ("read", "run", "approve", "write", "admin")
KINDS = ("workflow", "model", "data", "vault", "access", "serve")  # access:reload, serve:reload: admin only
EFFECTS = ("allow", "deny")
_FIELDS = {"subjects", "effect", "actions", "resources", "description"}
SUBJECT_KINDS = ("token", "user", "group")
#: where ``access grant create`` keeps its grants, as a grant's source says it
DATASTORE_SOURCE = "datastore:access/grants.json"


@dataclass(frozen=True)
class Grant:
    source: str
    subjects: tuple[str, ...]
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    description: str | None = None

    @property
    def id(self) -> str:
        return grant_id(self.subjects, self.effect, self.actions, self.resources)

    def matches(self, subjects: list[str], action: str, resource: str) -> bool:
        return ((action in self.actions or "admin" in self.actions)
                and any(fnmatch.fnmatchcase(s, p) for s in subjects for p in self.subjects)
                and any(fnmatch.fnmatchcase(resource, p) for p in self.resources))

    def to_json(self) -> dict:
        doc = {"id": self.id, "source": self.source, "effect": self.effect, "subjects": list(self.subjects),
               "actions": list(self.actions), "resources": list(self.resources)}
        if self.description:
            doc["description"] = self.description
        return doc

    def to_entry(self) -> dict:
        """As the datastore document keeps it (under its id)."""
        doc = {"effect": self.effect, "subjects": list(self.subjects), "actions": list(self.actions),
               "resources": list(self.resources)}
        if self.description:
            doc["description"] = self.description
        return doc


def grant_id(subjects, effect, actions, resources) -> str:
    """The same grant made twice, anywhere, has the same id (so two peers
    creating it merge cleanly); ``g-`` and 12 hex digits."""
    import hashlib
    import json

    canon = json.dumps([sorted(subjects), effect, sorted(actions), sorted(resources)], separators=(",", ":"))
    return "g-" + hashlib.sha256(canon.encode()).hexdigest()[:12]


def grants_dir(repo: Repo) -> Path:
    return repo.root / "grants"


def _strings(value, what: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValidationError(f"{where}: {what} must be a non-empty list of strings")
    return tuple(value)


def parse(doc, source: str) -> list[Grant]:
    if doc is None:
        return []
    if not isinstance(doc, dict) or set(doc) - {"grants"} or not isinstance(doc.get("grants", []), list):
        raise ValidationError(f"{source}: a grants file holds one key, 'grants', a list",
                              hint="see docs/serve.md for the format")
    return [parse_one(g, f"{source}: grants[{i}]", source) for i, g in enumerate(doc.get("grants") or [])]


def parse_entries(entries: dict, source: str = DATASTORE_SOURCE) -> list[Grant]:
    """The datastore's grants (``{ID: grant}``); an id must be its grant's."""
    out = []
    for key, g in sorted(entries.items()):
        grant = parse_one(g, f"{source}: grants[{key!r}]", source)
        if key != grant.id:
            raise ValidationError(f"{source}: grant {key!r} holds the content of {grant.id}",
                                  hint="a grant's id is made from its content: revoke it and create it again")
        out.append(grant)
    return out


def parse_one(g, where: str, source: str) -> Grant:
    if not isinstance(g, dict):
        raise ValidationError(f"{where} must be a map")
    unknown = set(g) - _FIELDS
    if unknown:
        raise ValidationError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}",
                              hint=f"fields: {', '.join(sorted(_FIELDS))}")
    effect = g.get("effect", "allow")
    if effect not in EFFECTS:
        raise ValidationError(f"{where}: effect must be allow or deny, not {effect!r}")
    subjects = _strings(g.get("subjects"), "subjects", where)
    for s in subjects:
        check_subject(s, where)
    actions = _strings(g.get("actions"), "actions", where)
    bad = [a for a in actions if a not in ACTIONS and a != "*"]
    if bad:
        raise ValidationError(f"{where}: unknown action(s) {', '.join(bad)}", hint=f"actions: {', '.join(ACTIONS)}")
    if "*" in actions:
        actions = ACTIONS
    resources = _strings(g.get("resources"), "resources", where)
    for r in resources:
        if r != "*" and r.split(":", 1)[0] not in KINDS:
            raise ValidationError(f"{where}: resource {r!r} must start with one of "
                                  f"{', '.join(k + ':' for k in KINDS)}")
    description = g.get("description")
    if description is not None and not isinstance(description, str):
        raise ValidationError(f"{where}: description must be text")
    return Grant(source, subjects, effect, actions, resources, description or None)


def check_subject(subject: str, where: str = "subject") -> str:
    kind, sep, name = subject.partition(":")
    if kind not in SUBJECT_KINDS or not sep or not name:
        raise ValidationError(f"{where}: subject {subject!r} must be token:NAME, user:NAME or group:NAME")
    return subject


def load_files(repo: Repo) -> list[Grant]:
    """The grants of grants/*.yaml."""
    from swamp.util import yamlio

    out: list[Grant] = []
    d = grants_dir(repo)
    for path in sorted(d.glob("*.yaml")) + sorted(d.glob("*.yml")):
        rel = str(path.relative_to(repo.root))
        out += parse(yamlio.loads(path.read_text(), rel), rel)
    return out


def with_groups(subjects: list[str], groups: dict) -> list[str]:
    """The subjects and ``group:NAME`` for each group that lists one of them."""
    have = set(subjects)
    extra = [f"group:{name}" for name, g in sorted(groups.items())
             if f"group:{name}" not in have and have & set(g.get("members") or {})]
    return list(subjects) + extra


def broken(e: SwampError, what: str = "grants") -> AccessBroken:
    return AccessBroken(f"the {what} cannot be read, so every request is refused: {e.message}",
                        hint="fix what it names ('swamp access reload' checks it); it is read again by itself")


def decide(grants: list[Grant], subjects: list[str], action: str, resource: str) -> tuple[bool, Grant | None]:
    """(allowed, the grant that decided); deny wins over allow."""
    allow = None
    for g in grants:
        if g.matches(subjects, action, resource):
            if g.effect == "deny":
                return False, g
            allow = allow or g
    return allow is not None, allow
