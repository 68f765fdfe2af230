"""The lease a model's data versions are allocated under. Models own this
name; the application layer takes the lease, the datastore only holds it."""

from __future__ import annotations

from swamp.data.layout import model_lease


def model_lock_name(model_type: str, model_id: str) -> str:
    return model_lease(model_type, model_id)
