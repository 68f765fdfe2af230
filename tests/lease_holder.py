"""A process of its own holding a model's datastore lease for a repository
until a file appears: the other peer (or process) a lease wait waits for."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers import _env

#: holds model NAME's lease in the repository REPO until the file RELEASE exists
_HOLDER = textwrap.dedent('''
    import os, sys, time
    from swamp.repo.context import Repo
    from swamp.models.definitions import find_definition
    from swamp.models.leases import model_lock_name

    repo = Repo.open(sys.argv[1])
    d = find_definition(repo, sys.argv[2])[1]
    with repo.datastore.lock(model_lock_name(d.type, d.id)):
        print("held", flush=True)
        while not os.path.exists(sys.argv[3]):
            time.sleep(0.05)
''')


def hold(repo: Path, model: str, release: Path) -> subprocess.Popen:
    """The holder, started, once it holds ``model``'s lease; it lets go
    when ``release`` exists (or when killed, without letting go)."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(repo), model, str(release)],
                              stdout=subprocess.PIPE, text=True, env=_env())
    assert holder.stdout.readline().strip() == "held"
    return holder
