"""YAML 1.2 through ruamel.yaml: the safe (C) loader for reads, round-trip
for edits of user-authored files so comments survive. The plain block
mappings swamp writes itself are read and written by util/yaml_light.py
without importing ruamel.yaml, with the same result; anything else goes to
ruamel.yaml."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from swamp.errors import ValidationError
from swamp.util import yaml_light


def _safe():
    from ruamel.yaml import YAML

    y = YAML(typ="safe")
    y.default_flow_style = False
    return y


def loads(text: str, source: str = "<string>") -> Any:
    ok, doc = yaml_light.load(text)  # swamp's own plain files, without importing ruamel.yaml (7 ms)
    if ok:
        return doc
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return _safe().load(text)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ValidationError(f"malformed YAML in {where}: {e.problem or e.context}") from None
    except YAMLError as e:
        raise ValidationError(f"malformed YAML in {source}: {e}") from None
    except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as e:
        # A scalar its tag or form cannot be (a date 2026-13-45, `!!int x`): the constructor's own error.
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
    text = yaml_light.dump(data)  # the same text ruamel.yaml writes, for the narrow form swamp's files take
    if text is not None:
        return text
    y = _safe()
    y.sort_base_mapping_type_on_output = False
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()
