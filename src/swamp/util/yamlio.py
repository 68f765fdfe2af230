"""YAML 1.2 through ruamel.yaml: the safe (C) loader for reads, round-trip
for edits of user-authored files so comments survive."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from swamp.errors import ValidationError


def _safe():
    from ruamel.yaml import YAML

    y = YAML(typ="safe")
    y.default_flow_style = False
    return y


def loads(text: str, source: str = "<string>") -> Any:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _safe().load(text)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ValidationError(f"malformed YAML in {where}: {e.problem or e.context}") from None
    except YAMLError as e:
        raise ValidationError(f"malformed YAML in {source}: {e}") from None


def load(path: Path | str) -> Any:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        from swamp.errors import NotFoundError

        raise NotFoundError(f"{path} does not exist") from None
    return loads(text, str(path))


def dumps(data: Any) -> str:
    y = _safe()
    y.sort_base_mapping_type_on_output = False
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()
