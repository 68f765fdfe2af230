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
(``access/groups.json``) add ``group:NAME`` to the subjects of the members
they list. A server enforces the files' grants and the datastore's
together."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swamp.errors import AccessBroken, SwampError, ValidationError
from swamp.util import file_stamps

if TYPE_CHECKING:
    from swamp.app.repository import Repo

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


def load(repo: Repo) -> list[Grant]:
    """Every grant a server of this checkout enforces: the files' and the
    datastore's (pulled first)."""
    from swamp.app.access import read

    return load_files(repo) + parse_entries(read(repo, "grants"))


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


class GrantSet:
    """The grants, read again when a file under grants/ or the datastore's
    grants or groups change. A broken file refuses everything (and says
    why) rather than allowing by accident.

    Checked on every request, so without a walk: the directory's listing is
    kept while the directory's stamp holds, and each file listed is stat'ed
    (util/file_stamps.py). Stamps too fresh to trust mean the files are
    read again on the next request too."""

    def __init__(self, repo: Repo) -> None:
        from swamp.serve.access_state import SharedDoc

        self.repo = repo
        self._dir = grants_dir(repo)
        self._stamp = None
        self._listing: tuple | None = None  # (the directory's stamp, its grant files)
        self._file_grants: list[Grant] = []
        self._error: SwampError | None = None
        self._files_read: list[str] = []
        self._shared_grants = SharedDoc(repo, "grants")
        self._shared_groups = SharedDoc(repo, "groups")
        self._parsed: tuple[dict, list[Grant]] | None = None

    def _files(self, dir_stamp, taken: int) -> list[Path]:
        if self._listing is not None and self._listing[0] == dir_stamp:
            return self._listing[1]
        files = sorted(list(self._dir.glob("*.yaml")) + list(self._dir.glob("*.yml")))
        # a name added in the same timestamp tick as the listing would leave the stamp as it is
        self._listing = (dir_stamp, files) if file_stamps.settled([dir_stamp], taken) else None
        return files

    def _stampnow(self, taken: int) -> tuple:
        dir_stamp = file_stamps.stamp_of(self._dir)
        if dir_stamp is None:
            return ()
        return (dir_stamp, *((str(p), file_stamps.stamp_of(p)) for p in self._files(dir_stamp, taken)))

    def current(self) -> list[Grant]:
        taken = file_stamps.now_ns()
        stamp = self._stampnow(taken)
        if stamp != self._stamp:
            try:
                self._file_grants, self._error = load_files(self.repo), None
            except SwampError as e:
                self._file_grants, self._error = [], broken(e)
            stamps = [stamp[0], *(s for _, s in stamp[1:])] if stamp else []
            self._stamp = stamp if file_stamps.settled(stamps, taken) else None  # too fresh: read again next time
            self._files_read = [f for f, _ in stamp[1:]]
        if self._error is not None:
            raise self._error
        try:
            entries = self._shared_grants.current()
            if self._parsed is None or self._parsed[0] is not entries:
                self._parsed = (entries, parse_entries(entries))
        except SwampError as e:
            self._parsed = None
            raise broken(e) from None
        return self._file_grants + self._parsed[1]

    def groups(self) -> dict:
        try:
            return self._shared_groups.current()
        except SwampError as e:
            raise broken(e, "groups") from None

    def allowed(self, subjects: list[str], action: str, resource: str) -> bool:
        grants = self.current()
        return decide(grants, with_groups(subjects, self.groups()), action, resource)[0]

    def reload(self) -> dict:
        """Read the files and the datastore's grants again now, changed or
        not (``swamp access reload``): ``{"grants", "files", "groups"}``,
        or the broken file's error."""
        from swamp.app.lifecycle import refresh

        refresh(self.repo)  # nothing to do on a directory datastore
        self._stamp = self._listing = None
        self._shared_grants.forget()
        self._shared_groups.forget()
        found = self.current()
        files = sorted(os.path.relpath(f, self.repo.root) for f in self._files_read)
        if self._shared_grants.current():
            files.append(DATASTORE_SOURCE)
        return {"grants": len(found), "files": files, "groups": len(self.groups())}
