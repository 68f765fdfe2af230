"""Reviewing extension changes: ``swamp extension history``, ``approve`` and
``reject`` (the record itself is ``swamp.extensions.history``).

Approving a proposal is a change of the lockfile like a pull: one
``changing`` session under the lockfile's lease reads the history and the
lockfile as of its pull, checks that the proposal still waits, that the
approver is not who proposed it and that the pin is still the one it was
proposed against, then pins the proposed entry (its wheels' hashes as the
proposer's machine checked them) and records the approval, in one commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swamp.app.extensions import _change, _check_types_free
from swamp.app.lifecycle import reading
from swamp.datastore.sync.counts import SyncCounts
from swamp.errors import ApprovalRefusedError, ConflictError, NotFoundError
from swamp.extensions import history, lockfile
from swamp.extensions.names import check_name
from swamp.repo import shared_config

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def history_of(repo: Repo, name: str | None = None) -> dict:
    """Every change (of NAME, or all), oldest first, and what waits for approval."""
    if name is not None:
        name = check_name(name)
    counts = SyncCounts()
    with reading(repo, into=counts):
        changes, unreadable = history.read(repo.datastore)
        required = history.approval_required(shared_config.read(repo.datastore))
    waiting = history.pending(changes)
    return {"order": "oldest first",
            "changes": [c.to_json() for c in changes if name is None or c.name == name],
            "pending": [waiting[n].to_json() for n in sorted(waiting) if name is None or n == name],
            "requireApproval": required, "unreadable": unreadable, "sync": counts.to_json()}


def approve(repo: Repo, name: str) -> dict:
    return _settle(repo, check_name(name), "approve")


def reject(repo: Repo, name: str) -> dict:
    return _settle(repo, check_name(name), "reject")


def _settle(repo: Repo, name: str, action: str) -> dict:
    me = history.identity()
    counts = SyncCounts()
    records: list[history.Change] = []
    settled: list[history.Change] = []

    def edit(lock):
        records.clear()
        proposal = history.pending(history.read(repo.datastore)[0]).get(name)
        if proposal is None:
            raise NotFoundError(f"no proposed change of {name} waits for approval",
                                hint=f"see 'swamp extension history {name}'")
        _check_reviewer(me, proposal, action)
        now = lock.extensions.get(name)
        if now != proposal.base:
            raise ConflictError(f"the pin of {name} changed since {proposal.by} proposed "
                                f"{_version(proposal.entry)} (it was {_version(proposal.base)}, it is "
                                f"{_version(now)})",
                                hint=f"look at 'swamp extension history {name}'; the change can be proposed again")
        summary = {"name": name, "from_": history.pin_of(name, now), "to": history.pin_of(name, proposal.entry),
                   "proposal": proposal.id, "proposedBy": proposal.by}
        records.append(history.new_change(action, me, **summary))
        settled[:] = [proposal]
        if action == "reject":
            return False
        _check_types_free(repo, lock, name, proposal.entry)
        lock.extensions[name] = proposal.entry
        return True

    _change(repo, f"extension {action} {name}", edit, {"name": name}, counts, records)
    p = settled[0]
    return {"name": name, "action": action, "by": me, "proposal": p.id, "proposedBy": p.by,
            "proposes": p.proposes, "from": _version(p.base), "to": _version(p.entry),
            "index": p.entry.index if p.entry else None, "lockfile": lockfile.location(repo),
            "sync": counts.to_json()}


def _check_reviewer(me: str, proposal: history.Change, action: str) -> None:
    if action == "reject":
        return  # a proposer may withdraw their own proposal
    if not history.known(me):
        raise ApprovalRefusedError("swamp cannot tell who you are (no user name), so it cannot count an approval",
                                   hint="run it as a named user (USER set)")
    if history.same_identity(me, proposal.by):
        raise ApprovalRefusedError(
            f"{proposal.name} {_version(proposal.entry)} was proposed by {proposal.by}: "
            "an approval must come from a second identity",
            hint=f"ask a teammate to review it ('swamp extension history {proposal.name}') and run "
                 f"'swamp extension approve {proposal.name}'")


def _version(entry) -> str:
    return entry.version if entry is not None else "not pinned"
