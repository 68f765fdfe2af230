"""Two peers on one SeaweedFS prefix sharing a model ``m`` (a command/shell
that touches ``ran``) and one workflow, and a process that holds ``m``'s
lease for a peer until told to let go: what the tests of a cancel ending a
lease wait start from."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

from tests.helpers import cli, init_repo, ok, s3_setup_args, write_shell, write_workflow
from tests.lease_holder import hold

def two_peers(root: Path, seaweedfs, workflow: str, body: str) -> tuple[Path, Path]:
    """Peers ``a`` and ``b`` under ``root``, set up on one new prefix, with
    the model ``m`` and the workflow ``workflow`` (its ``jobs:`` as ``body``)."""
    args = s3_setup_args(seaweedfs)
    a = init_repo(root / "a")
    write_shell(a, "m", """
        type: command/shell
        name: m
        globalArguments:
          run: 'touch ran'
        """)
    write_workflow(a, workflow, body)
    ok(a, "datastore", "setup", *args)
    b = init_repo(root / "b")
    for part in ("models", "workflows"):
        shutil.copytree(a / part, b / part, dirs_exist_ok=True)
    ok(b, "datastore", "setup", *args)
    return a, b


@contextlib.contextmanager
def holding_m(repo: Path, release: Path) -> Iterator[subprocess.Popen]:
    """``m``'s lease held for ``repo`` by a process of its own, from when
    this is entered until it is left (``release`` then created)."""
    holder = hold(repo, "m", release)
    try:
        yield holder
    finally:
        release.touch()
        holder.wait(timeout=60)


def assert_nothing_published(*peers: Path) -> None:
    for peer in peers:
        versions = cli(peer, "data", "versions", "m", "result")
        assert versions.code != 0 or versions.data == [], versions
