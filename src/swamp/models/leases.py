"""The lease a model's data versions are allocated under. Models own this
name; the application layer takes the lease, the datastore only holds it."""

from __future__ import annotations


def model_lock_name(model_type: str, model_id: str) -> str:
    return f"model/{model_type}/{model_id}"
