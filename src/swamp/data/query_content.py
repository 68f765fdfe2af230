"""A data version's content as the `content` (and `attributes`) field of a
`data query` predicate, as workflow expressions see it in
`data.latest(...).attributes`.

Content is read only when a predicate names it (a query over names and tags
stays a catalog read), parsed as data (JSON, or YAML through the safe
loader; other text stays a string), never evaluated. A content larger than
``MAX_QUERY_CONTENT`` bytes is not read: the predicate sees no content for
it, so a test of it does not match."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from swamp.repo.context import Repo

#: bytes of one version's content read for a predicate (a bound, not a tuning knob)
MAX_QUERY_CONTENT = 4 * 1024 * 1024

#: the predicate fields that need the content read
CONTENT_FIELDS = ("content", "attributes")

_NAMES_CONTENT = re.compile(r"\b(content|attributes)\b")


def names_content(predicate: str) -> bool:
    return bool(_NAMES_CONTENT.search(predicate))


def content_reader(repo: Repo) -> Callable[[dict], dict]:
    """For a catalog row, the fields ``content`` and ``attributes`` (the
    content when it is a map), empty when it cannot be read as data."""
    from swamp.data.repository import DataRepository

    data = DataRepository(repo.datastore)

    def fields(row: dict) -> dict:
        if (row.get("size") or 0) > MAX_QUERY_CONTENT:
            return {}
        rec = data.get(row["modelType"], row["modelId"], row["name"], row["version"])
        value = parsed(data.content(rec), row.get("contentType") or "")
        if value is None:
            return {}
        return {"content": value, **({"attributes": value} if isinstance(value, dict) else {})}

    return fields


def parsed(raw: bytes, content_type: str) -> Any:
    """JSON or YAML as data, other text as a string, binary as None."""
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return None
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            return json.loads(text)
        except ValueError:
            return text
    if "yaml" in content_type:
        from swamp.errors import SwampError
        from swamp.util import yamlio

        try:
            return yamlio.loads(text)
        except SwampError:  # text that is not YAML stays text
            return text
    return text
