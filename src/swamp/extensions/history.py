"""The extension history: every change to the lockfile, and every proposed
change waiting for approval, as a team can review them
(``swamp extension history``, the dashboard's Extensions page).

One object per change, ``extensions/history/<when>-<id>.json`` in the
datastore, written once and never rewritten: peers that change the lockfile
at the same time each add their own object, so no peer's entry can be lost
by a merge (the sync engine treats the folder as immutable). Each records
who (this process's identity, the one runs record as ``initiatedBy``),
when, what (the extension, its version, index and the sha256 of its own
wheel before and after) and the command.

With ``extensions.requireApproval`` set (``swamp config set
extensions.requireApproval true``), a new pin or a change of one is recorded
as a *proposal* (``propose``, holding the whole entry it would pin) and the
lockfile does not change: every peer keeps running the approved pin. A
second identity's ``swamp extension approve NAME`` makes the proposal the
pin (``approve``), or ``reject`` drops it. A proposal is pending until an
approval or rejection names it, a later proposal for the same extension
replaces it, or the extension's pin changes otherwise."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from swamp.errors import NotFoundError
from swamp.extensions.lockfile import Entry
from swamp.util import clock
from swamp.util.ids import holder, new_id

DIR = "extensions/history"
#: the shared setting that makes new pins and their changes wait for a second identity
APPROVAL_SETTING = "extensions.requireApproval"

Action = Literal["pin", "update", "move", "repin", "remove", "trust-add", "trust-remove",
                 "propose", "approve", "reject", "setting"]
#: the actions that change an extension's pin in the lockfile
PIN_CHANGES = frozenset({"pin", "update", "move", "repin", "remove", "approve"})


class Pin(BaseModel):
    """An extension's pin, in short: what a reviewer compares."""

    model_config = ConfigDict(extra="ignore")

    version: str
    index: str
    #: the sha256 of the extension's own wheel
    sha256: str | None = None
    #: how many wheels it pins (its own and its dependencies')
    wheels: int = 1


class Change(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    at: str
    by: str
    action: Action
    #: the extension (None for a change of the trusted indexes)
    name: str | None = None
    #: trust-add / trust-remove: the index
    index: str | None = None
    from_: Pin | None = Field(None, alias="from")
    to: Pin | None = None
    #: setting: the shared setting changed (``APPROVAL_SETTING``) and its new value (None: unset)
    setting: str | None = None
    value: bool | str | int | float | None = None
    #: the command that made it
    command: str | None = None
    #: approve / reject: the proposal, and who proposed it
    proposal: str | None = None
    proposedBy: str | None = None
    #: propose: what approving it is (pin, update, move, repin), the entry
    #: approval pins, and the pin it was proposed against
    proposes: str | None = None
    entry: Entry | None = None
    base: Entry | None = None

    def to_json(self, *, full: bool = False) -> dict:
        doc = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        if not full:
            doc.pop("entry", None)
            doc.pop("base", None)
        return doc


def pin_of(name: str, entry: Entry | None) -> Pin | None:
    if entry is None:
        return None
    own = entry.wheel_of(name)
    return Pin(version=entry.version, index=entry.index, sha256=own.sha256 if own else None,
               wheels=len(entry.wheels))


def kind_of_change(before: Entry | None, after: Entry | None) -> str:
    """What changing an extension's pin from ``before`` to ``after`` is."""
    if after is None:
        return "remove"
    if before is None:
        return "pin"
    if before.index != after.index:
        return "move"
    if before.version != after.version:
        return "update"
    return "repin"  # the same version with other wheels: worth a reviewer's look


def approval_required(settings: dict) -> bool:
    value = settings.get(APPROVAL_SETTING)
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"))


def identity() -> str:
    """Who this process acts as: the identity a run records as ``initiatedBy``
    (one function for both, so the two never disagree)."""
    return holder()


def same_identity(a: str, b: str) -> bool:
    """The same person: ``user@host`` on two machines is still one user."""
    return a == b or a.split("@", 1)[0] == b.split("@", 1)[0]


def known(who: str) -> bool:
    return bool(who) and who.split("@", 1)[0] not in ("", "unknown")


def record_setting(ds, key: str, value, command: str) -> None:
    """A change of the approval setting is a change of who may change the
    code everyone runs: recorded like one (in the session that makes it)."""
    if key == APPROVAL_SETTING:
        shown = value if isinstance(value, (bool, str, int, float)) or value is None else str(value)
        record(ds, new_change("setting", identity(), setting=key, value=shown, command=command))


def new_change(action: str, by: str, **fields) -> Change:
    return Change(id=new_id(), at=clock.isoformat(), by=by, action=action, **fields)


def _path(change: Change) -> str:
    stamp = "".join(ch for ch in change.at if ch.isalnum())
    return f"{DIR}/{stamp}-{change.id}.json"


def record(ds, change: Change) -> str:
    """Add one change (inside the ``changing`` session that makes it)."""
    path = _path(change)
    ds.write_bytes(path, (json.dumps(change.model_dump(mode="json", by_alias=True, exclude_none=True),
                                     indent=2, sort_keys=True) + "\n").encode())
    return path


def read(ds) -> tuple[list[Change], list[str]]:
    """(every change, oldest first; the objects that are not a change, which
    are shown, never trusted)."""
    changes, unreadable = [], []
    for name in ds.listdir(DIR):
        if not name.endswith(".json"):
            continue
        try:
            doc = json.loads(ds.read_bytes(f"{DIR}/{name}"))
            changes.append(Change.model_validate(doc))
        except NotFoundError:
            continue
        except (ValueError, ValidationError):
            unreadable.append(f"{DIR}/{name}")
    changes.sort(key=lambda c: (c.at, c.id))
    return changes, unreadable


def pending(changes: list[Change]) -> dict[str, Change]:
    """extension -> its proposal waiting for approval."""
    settled = {c.proposal for c in changes if c.action in ("approve", "reject") and c.proposal}
    waiting: dict[str, Change] = {}
    for c in changes:  # oldest first: a later change settles an earlier proposal
        if c.name is None:
            continue
        if c.action == "propose":
            waiting[c.name] = c
        elif c.action in PIN_CHANGES and c.action != "approve":
            waiting.pop(c.name, None)
    return {n: c for n, c in waiting.items() if c.id not in settled}
