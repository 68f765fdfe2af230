"""Finding definition files, and reading one on the fast path (no pydantic):
``read_ref`` for commands that only need a model's name, type and id, such
as `data get`, ``read_definition`` for a method run. Both accept on that
path only a file exactly as the schema in definition_schema.py takes it;
the schema speaks for any other."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from swamp.errors import NotFoundError, SwampError, ValidationError
from swamp.util import yamlio
from swamp.util.documents import DocView
from swamp.util.names import NAME_MAX, NAME_RE, TYPE_RE

if TYPE_CHECKING:
    from swamp.repo.context import Repo


def iter_definition_files(repo: Repo) -> list[Path]:
    if not repo.models_dir.is_dir():
        return []
    return sorted(p for p in repo.models_dir.rglob("*.yaml") if not p.name.startswith("."))


def read_raw(path: Path) -> Any:
    raw = yamlio.load(path)
    if isinstance(raw, dict) and "id" not in raw and isinstance(raw.get("type"), str) \
            and isinstance(raw.get("name"), str):
        # A hand-written file without an id must name the same model (and so
        # the same data) on every load: derive the id from type and name.
        import uuid  # (uuid loads platform: only here)

        raw = {**raw, "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"swamp:model:{raw['type']}/{raw['name']}"))}
    return raw


def check_file_name(path: Path, name: str) -> None:
    if path.stem != name:
        raise ValidationError(f"{path}: name {name!r} does not match the file name {path.stem!r}")


def _schema():
    # pydantic loads only when a file strays from the fast path.
    from swamp.models.definition_schema import Definition

    return Definition


_NONE = type(None)
#: the scalar fields of a definition and the exact types each takes
_SCALARS = {"type": (str,), "typeVersion": (str, _NONE), "id": (str,), "name": (str,), "version": (int,),
            "description": (str, _NONE)}
_DEFAULTS = {"typeVersion": None, "version": 1, "description": None, "inputs": None, "resources": None,
             "files": None, "reports": None}


def _str_keyed(v: Any) -> bool:
    return type(v) is dict and all(type(k) is str for k in v)


def _override(v: Any) -> DocView | None:
    # DataOverride: {lifetime: str | None, garbageCollection: int | str | None}
    if type(v) is not dict or any(k not in ("lifetime", "garbageCollection") for k in v):
        return None
    if type(v.get("lifetime")) not in (str, _NONE) or type(v.get("garbageCollection")) not in (int, str, _NONE):
        return None
    return DocView({"lifetime": v.get("lifetime"), "garbageCollection": v.get("garbageCollection")})


def _light_field(key: str, v: Any) -> tuple[bool, Any]:
    """(fits, the value the schema would give) for one key of a definition."""
    t = type(v)
    if key in _SCALARS:
        return t in _SCALARS[key], v
    if key == "tags":
        return _str_keyed(v) and all(type(x) is str for x in v.values()), v
    if key == "globalArguments":
        return _str_keyed(v), v
    if key == "inputs":
        return v is None or _str_keyed(v), v
    if key == "methods":
        if not _str_keyed(v):
            return False, None
        out = {}
        for name, cfg in v.items():  # MethodConfig: {arguments: dict[str, Any]}
            if type(cfg) is not dict or any(k != "arguments" for k in cfg) \
                    or not _str_keyed(cfg.get("arguments", {})):
                return False, None
            out[name] = DocView({"arguments": dict(cfg.get("arguments", {}))})
        return True, out
    if key in ("resources", "files"):
        if v is None:
            return True, None
        if not _str_keyed(v):
            return False, None
        out = {k: _override(x) for k, x in v.items()}
        return all(x is not None for x in out.values()), out
    if key == "reports":
        return v is None or (t is list and all(type(x) is str for x in v)), v
    return False, None


def light_definition(raw: Any) -> DocView | None:
    """The whole definition (what a method run reads: arguments, inputs,
    methods, overrides) as the schema in definition_schema.py would give it,
    with nested views, when ``raw`` is exactly what that schema takes;
    None otherwise (then only the schema can tell)."""
    if type(raw) is not dict or not all(k in raw for k in ("type", "id", "name")):
        return None
    out: dict = {**_DEFAULTS, "tags": {}, "globalArguments": {}, "methods": {}}
    for key, v in raw.items():
        fits, value = _light_field(key, v) if type(key) is str else (False, None)
        if not fits:
            return None
        out[key] = dict(value) if type(value) is dict else list(value) if type(value) is list else value
    name, type_name = out["name"], out["type"]
    if not NAME_RE.match(name) or len(name) > NAME_MAX or not TYPE_RE.match(type_name) or ".." in type_name:
        return None
    return DocView(out)


def read_definition(path: Path) -> Any:
    """The definition in ``path`` for a method run: a DocView when the file
    is exactly as expected (no pydantic), else the pydantic Definition,
    which accepts and normalizes it or names every problem."""
    raw = read_raw(path)
    doc = light_definition(raw)
    if doc is None:
        from swamp.util.documents import validate

        doc = validate(_schema(), raw, str(path))
    check_file_name(path, doc.name)
    return doc


def read_ref(path: Path) -> DocView:
    """The definition as a DocView, for commands that only need a model's
    name, type and id (such as `data get`): on the fast path when the file
    is exactly what the schema takes, else the schema's reading of it."""
    raw = read_raw(path)
    doc = light_definition(raw)
    if doc is None:
        from swamp.util.documents import validate

        doc = DocView(validate(_schema(), raw, str(path)).model_dump())
    check_file_name(path, doc.name)
    return doc


def names_by_id(repo: Repo) -> dict[str, str]:
    """Each readable definition's name by its id (data knows models by id),
    automatic ones included."""
    from swamp.models import auto_definitions

    out = {}
    for p in auto_definitions.iter_files(repo) + iter_definition_files(repo):
        try:
            d = read_ref(p)
        except SwampError:
            continue
        out[d.id] = d.name
    return out


def find(repo: Repo, name_or_id: str, load: Callable[[Path], Any] = read_ref) -> tuple[Path, Any]:
    """By name (the file name) first, then by id."""
    if NAME_RE.match(name_or_id):
        for p in iter_definition_files(repo):
            if p.stem == name_or_id:
                return p, load(p)
    for p in iter_definition_files(repo):
        try:
            d = load(p)
        except SwampError:
            continue
        if d.id == name_or_id:
            return p, d
    from swamp.models import auto_definitions

    # An automatic definition (direct type execution), kept in the datastore.
    for p in auto_definitions.iter_files(repo):
        if p.stem == name_or_id:
            return p, load(p)
    for p in auto_definitions.iter_files(repo):
        try:
            d = load(p)
        except SwampError:
            continue
        if d.id == name_or_id:
            return p, d
    from swamp.util.names import did_you_mean

    names = [p.stem for p in iter_definition_files(repo)]
    raise NotFoundError(f"no model named {name_or_id!r}", hint=did_you_mean(name_or_id, names)
                        or "list models with 'swamp model search'")
