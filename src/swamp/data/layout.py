"""Where versioned data lives in the datastore:
``data/{type}/{modelId}/{name}/{version}/raw`` plus ``metadata.yaml``.

A version directory is complete once its metadata.yaml exists (written
last). The latest version is the highest complete version directory: there
is no separately stored "latest" marker that could go backwards."""

from __future__ import annotations

from swamp.util.names import check_data_name, check_type_name

DATA_ROOT = "data"
RAW = "raw"
METADATA = "metadata.yaml"
#: left in the directory of a deleted highest version, so its number is never reused
TOMBSTONE = "tombstone"
#: in a renamed name's directory: the name it was renamed to
FORWARD = "renamed-to"


def model_dir(model_type: str, model_id: str) -> str:
    check_type_name(model_type)
    if not model_id or "/" in model_id or ".." in model_id:
        raise ValueError(f"invalid model id {model_id!r}")
    return f"{DATA_ROOT}/{model_type}/{model_id}"


def model_lease(model_type: str, model_id: str) -> str:
    """The lease a model's data versions are allocated and published under
    (one spelling for the models that take it and the sync engine that
    checks it: swamp.models.leases, data/renumber.py)."""
    return f"model/{model_type}/{model_id}"


def name_dir(model_type: str, model_id: str, name: str) -> str:
    return f"{model_dir(model_type, model_id)}/{check_data_name(name)}"


def version_dir(model_type: str, model_id: str, name: str, version: int) -> str:
    return f"{name_dir(model_type, model_id, name)}/{int(version)}"
