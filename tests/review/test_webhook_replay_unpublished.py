"""Review (round after e212c4b): "a replayed request never runs its
workflow twice, whichever replica it reaches" (app/webhook_deliveries.py).

Hole: when the push of a delivery's record fails, `record` returns False
and serve runs the workflow anyway (serve/app.py logs "recorded here but
not published yet"). The record stays only in that replica's cache, so the
same delivery replayed to another replica finds nothing after its pull,
is recorded again and runs the workflow a second time. (Refusing with a
retryable answer and taking the local record back keeps "once": the test
below asserts that contract, so its first call now raises rather than
returning False.)"""

from __future__ import annotations

import pytest

from swamp.errors import ConflictError, NotRecordedError
from tests.review.shared import SwitchableStore, shared_repo


def test_a_delivery_whose_record_is_not_published_is_refused_and_its_retry_runs_once(tmp_path):
    """Fixed by refusing the delivery (503, unavailable) and taking the
    record back: the sender's retry, whichever replica it reaches, is
    recorded once (and run once); a further replay is refused."""
    from swamp.app import webhook_deliveries
    from swamp.util import clock

    store = SwitchableStore()
    a = shared_repo(tmp_path / "a", store, "replica-a")
    b = shared_repo(tmp_path / "b", store, "replica-b")
    stamp = int(clock.now())
    try:
        store.down = True  # replica a's commit fails: serve answers 503 and runs nothing
        with pytest.raises(NotRecordedError) as refused:
            webhook_deliveries.record(a, "deploy", "evt-1", stamp, window_s=300)
        assert refused.value.code == "unavailable"
        store.down = False
        a.datastore.sync()  # replica a publishes what it has: not the record it took back
        # the sender's retry reaches replica b: recorded there, once (and run)
        assert webhook_deliveries.record(b, "deploy", "evt-1", stamp, window_s=300) is True
        for replica in (a, b):  # a replay, on either replica, is refused
            with pytest.raises(ConflictError):
                webhook_deliveries.record(replica, "deploy", "evt-1", stamp, window_s=300)
    finally:
        a.datastore.engine.close()
        b.datastore.engine.close()
