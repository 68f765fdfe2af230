"""``vault:`` grants over HTTP: a run a caller starts (a method run, a
workflow run or resume, from the API or the dashboard) fetches each secret
its definition or workflow names with ``vault.get(VAULT, ...)`` only if
the caller has ``read`` on ``vault:VAULT`` (and stores a sensitive output
in a vault only with ``write`` there).

The vault package asks (vault/access.py, set through app/vault_access.py) where the secret is fetched;
this module answers from the caller's grants, and records each refusal in
serve's audit log, since the request that started the run may well answer
200 (a workflow whose step failed). The local user's token, and a server
run with ``--auth-mode none``, are not checked (full access, as the CLI).
The server's own runs (schedules, webhooks) run with the server's
authority: they are its configuration, written by those who may write
the repository. A run the server continues by itself once a signal
settles its wait goes on for whoever started it (``check_for_starter``)."""

from __future__ import annotations

import contextlib
from typing import Iterator

from swamp.app import vault_access as access
from swamp.errors import HttpError, NotFoundError
from swamp.util import actors


def check_for(state, subjects: list[str], op: str) -> access.VaultCheck | None:
    """The check of a run started by ``subjects`` through ``op`` (the
    route's name, for the audit log); None when they have full access."""
    if state.full_access(subjects):
        return None
    who = actors.of_subjects(subjects)

    def check(action: str, vault: str) -> None:
        resource = f"vault:{vault}"
        if state.grants.allowed(subjects, action, resource):
            return
        state.audit.record(who=subjects, op=op, action=action, resource=resource, status=403, code="forbidden",
                           why="a vault the run uses")
        uses = f"vault.get('{vault}', ...)" if action == "read" else f"a secret stored in vault {vault!r}"
        raise HttpError("forbidden", f"{action} on {resource} is not allowed for {who}: the run needs it for "
                                     f"{uses}, and nothing of the vault was fetched",
                        hint=f"an admin grants {action} on {resource} to {subjects[0]} in grants/*.yaml "
                             f"(check with 'swamp access can-i {action} {resource} --token NAME'), or the run "
                             "is started by someone who has it")

    return check


def check_for_starter(state, actor: str | None, op: str) -> access.VaultCheck | None:
    """The check of a run the server continues by itself for ``actor``, who
    started it: a token's run reads the vaults that token may read now (a
    revoked token's, none); any other starter's (a local user, a schedule,
    a webhook) runs with the server's authority, as it started. The actor
    is read back from the run record only to narrow that authority, never
    to widen it."""
    if not actor or not actor.startswith("token:") or state.settings.auth_mode == "none":
        return None
    name = actor[len("token:"):].split(" (user:", 1)[0]
    try:
        from swamp.app.access_tokens import subjects_for_name

        return check_for(state, subjects_for_name(state.repo, name), op)
    except NotFoundError:
        def revoked(action: str, vault: str) -> None:
            state.audit.record(who=[f"token:{name}"], op=op, action=action, resource=f"vault:{vault}",
                               status=403, code="forbidden", why="the token that started the run is revoked")
            raise HttpError("forbidden", f"{action} on vault:{vault} is not allowed: the token {name!r} that "
                                         "started the run is revoked, and nothing of the vault was fetched",
                            hint="start the run again with a token that may read the vault")

        return revoked


@contextlib.contextmanager
def acting_for_starter(state, actor: str | None, op: str) -> Iterator[None]:
    with access.acting_for(check_for_starter(state, actor, op)):
        yield


@contextlib.contextmanager
def acting_for(state, subjects: list[str], op: str) -> Iterator[None]:
    """Inside the block (in the thread that runs the use case), vault
    access is the caller's."""
    with access.acting_for(check_for(state, subjects, op)):
        yield
