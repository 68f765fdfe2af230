"""Who did something: the one spelling of an actor that every record naming
one uses (a workflow run's ``initiatedBy``, ``resumedBy`` and
``cancelledBy``, a method run's ``initiatedBy``, an approval's
``decidedBy``, a signal's ``by``), whichever way the action arrived.

- ``user:NAME@HOST``: someone on this machine, through the CLI (NAME from
  ``$USER``/``$LOGNAME``, else the OS account: util/ids.os_user);
- ``token:NAME``, or ``token:NAME (user:USER)`` when the token was minted
  for a user (``swamp access token mint NAME --user USER``): a caller of
  ``swamp serve``, through the API or the dashboard;
- ``schedule:NAME``: a serve schedule or a workflow's trigger firing;
- ``webhook:NAME``: a signed delivery to ``/hooks/NAME``;
- ``anonymous``: a caller of a server started with ``--auth-mode none``,
  which asks nobody who they are.

An actor is text to show and to search, never a credential: nothing
decides access by reading one back. Each kind has its own prefix, so a
local ``$USER`` of "token:ci" is ``user:token:ci@HOST``, never a token;
control characters (from an environment, or a token's user) become "?",
so a record shown to a peer cannot move their terminal's cursor."""

from __future__ import annotations

ANONYMOUS = "anonymous"


def _shown(text: str) -> str:
    return "".join("?" if ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0 else ch for ch in text)


def local_user() -> str:
    """The person running this process, on this machine."""
    from swamp.util.ids import hostname, os_user

    return _shown(f"user:{os_user()}@{hostname()}")


def token(name: str, user: str | None = None) -> str:
    return _shown(f"token:{name} (user:{user})" if user else f"token:{name}")


def schedule(name: str) -> str:
    return f"schedule:{name}"


def webhook(name: str) -> str:
    return f"webhook:{name}"


def of_subjects(subjects: list[str]) -> str:
    """The actor behind a server's caller, from the subjects access control
    knows them by (access/tokens.subjects_of: ``token:NAME`` first, then its
    ``user:`` and ``group:`` subjects); ``["anonymous"]`` without tokens."""
    if not subjects or subjects[0] == ANONYMOUS:
        return ANONYMOUS
    first = subjects[0]
    if first.startswith("token:"):
        user = next((s[len("user:"):] for s in subjects[1:] if s.startswith("user:")), None)
        return token(first[len("token:"):], user)
    return first  # webhook:NAME, schedule:NAME: already an actor
