"""The body of `swamp datastore sync`, without click: the click command
(swamp.cli.datastore) and the fast lane (swamp.cli.fast_lane) both call
`run`. A large pull or push is a whole command a user waits for: click and
its command tree are 20 to 40 ms of it that the transfer does not need."""

from __future__ import annotations

import sys

from swamp.cli.output import emit, human_size, say
from swamp.cli.state import CliState


def run(state: CliState, pull_only: bool = False, push_only: bool = False) -> None:
    """Pull peers' commits and push local changes (``pull_only``: only
    pull; ``push_only``: only push)."""
    from swamp.app.datastore import sync
    from swamp.cli.progress import progress_for
    from swamp.errors import UsageError

    if pull_only and push_only:
        raise UsageError("--pull and --push exclude each other")
    counts = sync(state.repo(), pull=not push_only, push=not pull_only, progress=progress_for(state))
    emit(state, counts, lambda: print_counts(counts))
    if counts.get("conflicts"):
        sys.exit(1)


def print_counts(counts: dict) -> None:
    say(f"pulled {counts['filesPulled']} files ({human_size(counts['bytesPulled'])}), "
        f"pushed {counts['filesPushed']} files ({human_size(counts['bytesPushed'])}), "
        f"deleted {counts['filesDeleted']}, {counts['requests']} requests, head {counts['head']}")
    for r in counts.get("renumbered", []):
        say(f"renumbered: {r['versions']} version {r['from']} is published as {r['to']} "
            f"(another peer published {r['from']} first)")
    for c in counts.get("conflicts", []):
        say(f"conflict: {c}", err=True)
