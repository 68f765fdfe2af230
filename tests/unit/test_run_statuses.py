"""One list of run statuses: the CLI's spelling (kept free of domain imports
for start-up) is the run record's own, in its order."""

from swamp.cli.run import STATUSES
from swamp.workflows.records import RUN_STATUSES


def test_the_clis_run_statuses_are_the_records():
    assert STATUSES == RUN_STATUSES
