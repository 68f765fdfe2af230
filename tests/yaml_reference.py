"""ruamel.yaml as the reference that swamp's light YAML reader and writer
(src/swamp/util/yaml_light.py) are compared with, and a view of a value
that tells types apart all the way down (1 is not True, a list not a tuple,
NaN equal to itself)."""

from __future__ import annotations

import io

from ruamel.yaml import YAML


def ruamel_load(text: str):
    return YAML(typ="safe").load(text)


def ruamel_dump(data) -> str:
    """What swamp wrote before yaml_light: the safe dumper, block style, keys in their order."""
    y = YAML(typ="safe")
    y.default_flow_style = False
    y.sort_base_mapping_type_on_output = False
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def typed(v):
    if isinstance(v, dict):
        return ("dict", [(typed(k), typed(x)) for k, x in v.items()])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [typed(x) for x in v])
    if isinstance(v, float) and v != v:
        return ("float", "nan")
    return (type(v).__name__, v)
