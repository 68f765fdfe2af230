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
are read again when any of them changes."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from swamp.errors import ValidationError
from swamp.util import file_stamps

ACTIONS = ("read", "run", "approve", "write", "admin")
KINDS = ("workflow", "model", "data", "vault")
EFFECTS = ("allow", "deny")
_FIELDS = {"subjects", "effect", "actions", "resources", "description"}


@dataclass(frozen=True)
class Grant:
    source: str
    subjects: tuple[str, ...]
    effect: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]

    def matches(self, subjects: list[str], action: str, resource: str) -> bool:
        return ((action in self.actions or "admin" in self.actions)
                and any(fnmatch.fnmatchcase(s, p) for s in subjects for p in self.subjects)
                and any(fnmatch.fnmatchcase(resource, p) for p in self.resources))

    def to_json(self) -> dict:
        return {"source": self.source, "effect": self.effect, "subjects": list(self.subjects),
                "actions": list(self.actions), "resources": list(self.resources)}


def grants_dir(repo) -> Path:
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
    out = []
    for i, g in enumerate(doc.get("grants") or []):
        where = f"{source}: grants[{i}]"
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
            if s.split(":", 1)[0] not in ("token", "user", "group") or ":" not in s:
                raise ValidationError(f"{where}: subject {s!r} must start with token:, user: or group:")
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
        out.append(Grant(source, subjects, effect, actions, resources))
    return out


def load(repo) -> list[Grant]:
    from swamp.util import yamlio

    out: list[Grant] = []
    d = grants_dir(repo)
    for path in sorted(d.glob("*.yaml")) + sorted(d.glob("*.yml")):
        rel = str(path.relative_to(repo.root))
        out += parse(yamlio.loads(path.read_text(), rel), rel)
    return out


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
    """The grants, read again when a file under grants/ changes. A broken
    file refuses everything (and says why) rather than allowing by accident.

    Checked on every request, so without a walk: the directory's listing is
    kept while the directory's stamp holds, and each file listed is stat'ed
    (util/file_stamps.py). Stamps too fresh to trust mean the files are
    read again on the next request too."""

    def __init__(self, repo) -> None:
        self.repo = repo
        self._dir = grants_dir(repo)
        self._stamp = None
        self._listing: tuple | None = None  # (the directory's stamp, its grant files)
        self._grants: list[Grant] = []
        self._error: ValidationError | None = None
        self._files_read: list[str] = []

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
                self._grants, self._error = load(self.repo), None
            except ValidationError as e:
                self._grants, self._error = [], e
            stamps = [stamp[0], *(s for _, s in stamp[1:])] if stamp else []
            self._stamp = stamp if file_stamps.settled(stamps, taken) else None  # too fresh: read again next time
            self._files_read = [f for f, _ in stamp[1:]]
        if self._error is not None:
            raise self._error
        return self._grants

    def allowed(self, subjects: list[str], action: str, resource: str) -> bool:
        return decide(self.current(), subjects, action, resource)[0]

    def reload(self) -> dict:
        """Read the files again now, changed or not (``swamp access
        reload``): ``{"grants", "files"}``, or the broken file's error."""
        self._stamp = self._listing = None
        found = self.current()
        return {"grants": len(found), "files": sorted(os.path.relpath(f, self.repo.root) for f in self._files_read)}
