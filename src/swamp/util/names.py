"""Names that become path segments. Checked before anything is written."""

from __future__ import annotations

import re

from swamp.errors import ValidationError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
NAME_MAX = 64
RESERVED_DATA_NAMES = frozenset({"latest"})
# A model type: segments like "command/shell", "acme/counter", "@acme/aws/vpc".
TYPE_RE = re.compile(r"^@?[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)+$")


#: a workflow name scoped to a collective, as upstream's extensions ship them: "@acme/child"
SCOPED_NAME_RE = re.compile(r"^@([a-z0-9][a-z0-9_-]*)/([a-z0-9][a-z0-9_-]*)$")


def is_workflow_name(name: str) -> bool:
    """A plain name, or ``@scope/name`` (each part a plain name)."""
    if not isinstance(name, str):
        return False
    m = SCOPED_NAME_RE.match(name)
    parts = m.groups() if m else (name,)
    return all(NAME_RE.match(p) and len(p) <= NAME_MAX for p in parts)


def check_workflow_name(name: str) -> str:
    if not is_workflow_name(name):
        raise ValidationError(
            f"invalid workflow name {name!r}",
            hint=f"a workflow name matches ^[a-z0-9][a-z0-9_-]*$, or is scoped as @scope/name with both parts "
                 f"so, each at most {NAME_MAX} characters")
    return name


def check_name(name: str, what: str = "name") -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > NAME_MAX:
        raise ValidationError(
            f"invalid {what} {name!r}",
            hint=f"a {what} matches ^[a-z0-9][a-z0-9_-]*$ and has at most {NAME_MAX} characters",
        )
    return name


def check_data_name(name: str) -> str:
    check_name(name, "data name")
    if name in RESERVED_DATA_NAMES:
        raise ValidationError(f"data name {name!r} is reserved", hint="choose another name")
    return name


def check_type_name(type_name: str) -> str:
    if not isinstance(type_name, str) or not TYPE_RE.match(type_name) or ".." in type_name:
        raise ValidationError(
            f"invalid model type {type_name!r}",
            hint="a type has at least two segments, such as 'acme/counter'",
        )
    return type_name


def check_rel_path(path: str) -> str:
    """A datastore-relative path: forward slashes, no '..', not absolute,
    no NUL, no backslash, no empty segments."""
    if (
        not isinstance(path, str)
        or not path
        or path.startswith("/")
        or "\\" in path
        or "\x00" in path
        or any(seg in ("", ".", "..") for seg in path.split("/"))
    ):
        raise ValidationError(f"invalid datastore path {path!r}")
    return path


def did_you_mean(word: str, choices) -> str | None:
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None
