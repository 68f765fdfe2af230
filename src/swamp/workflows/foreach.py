"""forEach: one step becomes one step per item of a list or entry of a map.

Names (CLI.md "forEach step names"): a name containing ``${{ }}`` is
evaluated per item; otherwise it gets a suffix: ``-<item>`` for strings and
numbers, ``-<key>`` for map entries, ``-<index>`` for anything else. Map
entries come in key order, so the expansion does not depend on how a map
happened to be built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from swamp.errors import ValidationError
from swamp.expr.template import to_text


@dataclass(frozen=True)
class Expansion:
    name: str
    item: Any  # the value of self.<item>


def items_of(value: Any) -> list[tuple[Any, Any]]:
    """``(suffix source, self value)`` per item. Map entries are
    ``{key, value}``."""
    if isinstance(value, dict):
        return [(str(k), {"key": k, "value": value[k]}) for k in sorted(value, key=str)]
    if isinstance(value, (list, tuple)):
        return [(v if _scalar(v) else i, v) for i, v in enumerate(value)]
    raise ValidationError(f"forEach.in must give a list or a map, not {type(value).__name__}")


def _scalar(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))


def expand(name: str, value: Any, render_name: Callable[[Any], Any] | None) -> list[Expansion]:
    """The expansions of a step called ``name`` over ``value``;
    ``render_name(item)`` evaluates a templated name for one item."""
    out: list[Expansion] = []
    seen: dict[str, int] = {}
    for suffix, item in items_of(value):
        if render_name is not None:
            new = render_name(item)
            if not isinstance(new, str):
                new = to_text(new)
        else:
            new = f"{name}-{suffix}"
        if not new:
            raise ValidationError(f"forEach step {name!r}: an item gives an empty step name")
        if new in seen:
            raise ValidationError(f"forEach step {name!r}: two items give the step name {new!r}",
                                  hint="make the name depend on the item, e.g. \"deploy-${{ self.item }}\"")
        seen[new] = len(out)
        out.append(Expansion(new, item))
    return out
