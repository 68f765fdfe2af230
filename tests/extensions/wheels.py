"""Small wheels made by hand for the fast tests (the slow ones build real
packages with `swamp extension new` and publish them)."""

from __future__ import annotations

import zipfile
from pathlib import Path

TYPE_MODULE = '''
from pydantic import BaseModel
from swamp import ModelType, Context

model = ModelType("{type}", version="2026.11.30.1", description="test type")
model.resource("out", schema=None)


@model.method(description="Say hello")
def hello(args, ctx: Context) -> None:
    ctx.write_resource("out", "out", {{"greeting": "hello from {name} {version}"}})
'''


def make_wheel(dest: Path, name: str, version: str, *, types: tuple[str, ...] = (), body: str | None = None,
               requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel named ``name`` whose module declares ``types``."""
    mod = name.replace("-", "_")
    dist = f"{mod}-{version}"
    path = dest / f"{dist}-py3-none-any.whl"
    eps = "[swamp.model_types]\n" + "".join(f"t{i} = {mod}.t{i}:model\n" for i in range(len(types)))
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: test extension {name}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{mod}/__init__.py", "")
        for i, t in enumerate(types):
            z.writestr(f"{mod}/t{i}.py", body if body is not None else TYPE_MODULE.format(type=t, name=name,
                                                                                          version=version))
        z.writestr(f"{dist}.dist-info/METADATA", meta)
        z.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                              "Tag: py3-none-any\n")
        if types:
            z.writestr(f"{dist}.dist-info/entry_points.txt", eps)
        z.writestr(f"{dist}.dist-info/RECORD", "")
    return path
