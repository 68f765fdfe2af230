"""Writing an extension with the ordinary Python toolchain: the scaffold
``extension new`` writes, building a wheel, formatting, and uploading to an
index. Credentials come from the environment or the usual config files
(``TWINE_USERNAME``/``TWINE_PASSWORD``, ``~/.pypirc``, ``~/.netrc``); swamp
never writes them anywhere."""

from __future__ import annotations

import base64
import configparser
import hashlib
import importlib.util
import netrc
import os
import shutil
import subprocess
import sys
import tomllib
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

from swamp.errors import ExtensionError, IndexError_, UsageError
from swamp.extensions.environment import MODEL_TYPES_GROUP, VAULT_TYPES_GROUP
from swamp.extensions.names import check_name, module_name, normalize


# ---------------------------------------------------------------- scaffold
def scaffold(name: str, dest: Path, *, vault: bool = False) -> list[str]:
    """Write a new extension package into ``dest`` (which must not exist or
    be empty): one model type, or with ``vault`` one vault type. Returns the
    files written, relative to ``dest``."""
    dist = check_name(name)
    mod = module_name(dist)
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest} already exists and is not empty", hint="choose another NAME or --path")
    type_name = f"{dist}/hello"
    if vault:
        vtype = mod[:63]
        files = {
            "pyproject.toml": _VAULT_PYPROJECT.format(dist=dist, mod=mod, group=VAULT_TYPES_GROUP, vtype=vtype),
            "README.md": _VAULT_README.format(dist=dist, mod=mod, vtype=vtype, group=VAULT_TYPES_GROUP),
            f"src/{mod}/__init__.py": f'"""{dist}: a swamp vault type."""\n',
            f"src/{mod}/vault.py": _VAULT.format(vtype=vtype),
            "tests/test_vault.py": _VAULT_TEST.format(mod=mod, vtype=vtype),
        }
        return _write(dest, files)
    files = {
        "pyproject.toml": _PYPROJECT.format(dist=dist, mod=mod, group=MODEL_TYPES_GROUP),
        "README.md": _README.format(dist=dist, mod=mod, type=type_name, group=MODEL_TYPES_GROUP),
        f"src/{mod}/__init__.py": f'"""{dist}: swamp model types."""\n',
        f"src/{mod}/model.py": _MODEL.format(type=type_name),
        "tests/test_model.py": _TEST.format(mod=mod, type=type_name),
    }
    return _write(dest, files)


def _write(dest: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(files)


_PYPROJECT = '''[build-system]
requires = ["hatchling>=1.20"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
description = "swamp model types"
readme = "README.md"
requires-python = ">=3.11"
# swamp itself is the host that loads this package: never list it here.
dependencies = []

# swamp finds the model types through this entry point group: each entry
# names a ModelType (or a module holding some).
[project.entry-points."{group}"]
hello = "{mod}.model:model"

[tool.hatch.build.targets.wheel]
packages = ["src/{mod}"]
'''

_VAULT_PYPROJECT = '''[build-system]
requires = ["hatchling>=1.20"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
description = "a swamp vault type"
readme = "README.md"
requires-python = ">=3.11"
# swamp itself is the host that loads this package: never list it here.
dependencies = []

# swamp finds the vault types through this entry point group: each entry
# names a VaultType (an instance, a class, or a module with VAULT_TYPE).
[project.entry-points."{group}"]
{vtype} = "{mod}.vault:VAULT_TYPE"

[tool.hatch.build.targets.wheel]
packages = ["src/{mod}"]
'''

_VAULT = '''"""A vault type that keeps each vault's secrets in one JSON file (mode
0600). Replace the storage with your secret store's client; keep the
contract (docs/vaults.md): failures a user can meet are SwampErrors with a
hint, and no message ever carries a value."""

import json
import os
from pathlib import Path

from swamp.errors import NotFoundError
from swamp.vault.types import Setting, VaultType


class JsonFileVault:
    def __init__(self, name: str, path: Path) -> None:
        self.name, self.path = name, path

    def _doc(self) -> dict:
        return json.loads(self.path.read_text()) if self.path.is_file() else {{}}

    def _save(self, doc: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, sort_keys=True)
        os.replace(tmp, self.path)

    def create(self) -> None:
        if not self.path.is_file():
            self._save({{}})

    def check(self) -> None:
        self._doc()

    def location(self) -> str:
        return str(self.path)

    def put(self, key: str, value: str) -> bool:
        doc = self._doc()
        replaced = key in doc
        doc[key] = {{"value": value, "meta": doc.get(key, {{}}).get("meta", {{}})}}
        self._save(doc)
        return replaced

    def get(self, key: str) -> str:
        doc = self._doc()
        if key not in doc:
            raise NotFoundError(f"vault {{self.name}} has no key {{key!r}}")
        return doc[key]["value"]

    def exists(self, key: str) -> bool:
        return key in self._doc()

    def list_keys(self) -> list[str]:
        return sorted(self._doc())

    def delete(self, key: str) -> None:
        doc = self._doc()
        if doc.pop(key, None) is None:
            raise NotFoundError(f"vault {{self.name}} has no key {{key!r}}")
        self._save(doc)

    def read_meta(self, key: str) -> dict:
        return self._doc().get(key, {{}}).get("meta", {{}})

    def write_meta(self, key: str, meta: dict) -> None:
        doc = self._doc()
        doc[key]["meta"] = meta
        self._save(doc)


class JsonFileType(VaultType):
    name = "{vtype}"
    description = "Secrets in one JSON file per vault (replace me)"
    settings = (Setting("path", "the JSON file (default: under .swamp/secrets/)"),)

    def open(self, name: str, settings: dict, secrets_dir: Path) -> JsonFileVault:
        default = Path(secrets_dir) / self.name / f"{{name}}.json"
        return JsonFileVault(name, Path(settings["path"]) if settings.get("path") else default)


VAULT_TYPE = JsonFileType()
'''

_VAULT_TEST = '''from {mod}.vault import VAULT_TYPE


def test_a_value_put_is_read_back(tmp_path):
    vault = VAULT_TYPE.open("t", VAULT_TYPE.check_settings({{}}), tmp_path)
    vault.create()
    assert vault.put("api.token", "s3cret") is False
    assert vault.get("api.token") == "s3cret"
    assert vault.list_keys() == ["api.token"]


def test_the_type_describes_itself():
    assert VAULT_TYPE.describe()["type"] == "{vtype}"
'''

_VAULT_README = '''# {dist}

A swamp vault type, packaged as a Python distribution: `{vtype}`.

    swamp extension check          # builds, loads the vault type in a clean environment
    python -m pytest tests         # with swamp installed (PYTHONPATH=src)
    swamp extension publish --index URL

Using it in a swamp repository:

    swamp extension pull {dist} --index URL
    swamp vault create {vtype} team
    printf %s "$TOKEN" | swamp vault put team api.token

The type is declared in `pyproject.toml` under the entry point group
`{group}`; the code is in `src/{mod}/vault.py`.
'''

_MODEL = '''from pydantic import BaseModel

from swamp import Context, ModelType


class Settings(BaseModel):
    greeting: str = "hello"


class Greeting(BaseModel):
    text: str


model = ModelType("{type}", version="2026.01.01.1", global_arguments=Settings,
                  description="Says hello (replace me)")
model.resource("greeting", schema=Greeting, lifetime="infinite", garbage_collection=10,
               description="The last greeting")


@model.method(description="Write a greeting")
def greet(args: Settings, ctx: Context) -> None:
    ctx.write_resource("greeting", "greeting", Greeting(text=f"{{args.greeting}} from {{ctx.model_name}}"))
'''

_TEST = '''from {mod}.model import model


def test_the_type_describes_itself():
    doc = model.describe()
    assert doc["type"] == "{type}"
    assert doc["methods"]["greet"]["description"]
'''

_README = '''# {dist}

swamp model types, packaged as a Python distribution: `{type}`.

    swamp extension check          # builds, loads every type in a clean environment
    python -m pytest tests         # with swamp installed (PYTHONPATH=src)
    swamp extension publish --index URL

Using it in a swamp repository:

    swamp extension pull {dist} --index URL
    swamp model create {type} hello
    swamp model method run hello greet

Types are declared in `pyproject.toml` under the entry point group
`{group}`; the code is in `src/{mod}/`.
'''


# ---------------------------------------------------------------- project
@dataclass
class Project:
    path: Path
    name: str
    version: str


def read_project(path: Path) -> Project:
    pyproject = path / "pyproject.toml"
    try:
        doc = tomllib.loads(pyproject.read_text())
    except FileNotFoundError:
        raise UsageError(f"no pyproject.toml in {path}", hint="run it in the extension's directory, "
                                                               "or create one with 'swamp extension new NAME'") \
            from None
    except tomllib.TOMLDecodeError as e:
        raise ExtensionError(f"{pyproject}: {e}") from None
    proj = doc.get("project") or {}
    if not proj.get("name") or not proj.get("version"):
        raise ExtensionError(f"{pyproject}: [project] needs a name and a static version")
    return Project(path, normalize(proj["name"]), str(proj["version"]))


def build_wheel(project: Project, outdir: Path) -> Path:
    """Build the project's wheel, and its dependencies' wheels beside it,
    with pip (the build backend from the project's build-system; without
    isolation when swamp's environment has the backend already, so no
    download is needed)."""
    backend = _backend(project.path)
    isolated = backend is None or importlib.util.find_spec(backend.split(".")[0].split(":")[0]) is None
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
           "--wheel-dir", str(outdir), *([] if isolated else ["--no-build-isolation"]), str(project.path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()][-6:]
        raise ExtensionError(f"building {project.name} failed: " + " / ".join(tail),
                             hint="run 'pip wheel --no-deps .' there to see the whole output")
    wheels = [p for p in outdir.glob("*.whl") if normalize(p.name.split("-")[0]) == project.name]
    if not wheels:
        raise ExtensionError(f"building {project.name} made no wheel of it")
    return wheels[0]


def _backend(path: Path) -> str | None:
    try:
        doc = tomllib.loads((path / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return (doc.get("build-system") or {}).get("build-backend")


def source_of(file: str, target: Path, project: Path) -> str:
    """The project's own file for a file of its installed copy (so an error
    names the file the author edits)."""
    try:
        rel = Path(file).relative_to(target)
    except ValueError:
        return file
    for candidate in (project / "src" / rel, project / rel):
        if candidate.is_file():
            return str(candidate)
    return file


# ---------------------------------------------------------------- format
def ruff() -> list[str] | None:
    exe = shutil.which("ruff")
    if exe:
        return [exe]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    return None


def fmt(path: Path, *, check: bool) -> dict:
    cmd = ruff()
    if cmd is None:
        return {"path": str(path), "formatted": False, "skipped": True,
                "message": "ruff is not installed: nothing formatted (pip install ruff)"}
    proc = subprocess.run([*cmd, "format", *(["--check"] if check else []), str(path)],
                          capture_output=True, text=True)
    return {"path": str(path), "formatted": not check and proc.returncode == 0, "skipped": False,
            "clean": proc.returncode == 0, "message": (proc.stdout + proc.stderr).strip()}


# ---------------------------------------------------------------- upload
def upload_url(index: str) -> str:
    """Where a package is uploaded, from the index URL users install from:
    PyPI's upload endpoint for PyPI; the server's root for pypiserver-style
    'simple' URLs; devpi's index for its '+simple' URL."""
    url = index if index.endswith("/") else index + "/"
    host = urllib.parse.urlparse(url).hostname or ""
    if host == "pypi.org":
        return "https://upload.pypi.org/legacy/"
    if host == "test.pypi.org":
        return "https://test.pypi.org/legacy/"
    for suffix in ("+simple/", "simple/"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def credentials(url: str) -> tuple[str, str] | None:
    """(user, password) for an upload URL, from the environment, ~/.pypirc
    (the section whose repository is this URL) or ~/.netrc; None if none."""
    user, password = os.environ.get("TWINE_USERNAME"), os.environ.get("TWINE_PASSWORD")
    if password:
        return user or "__token__", password
    rc = Path(os.environ.get("PYPIRC", Path.home() / ".pypirc"))
    if rc.is_file():
        cfg = configparser.RawConfigParser()
        cfg.read(rc)
        for section in cfg.sections():
            repo = cfg.get(section, "repository", fallback="")
            if repo and repo.rstrip("/") == url.rstrip("/") and cfg.has_option(section, "password"):
                return cfg.get(section, "username", fallback="__token__"), cfg.get(section, "password")
    host = urllib.parse.urlparse(url).hostname
    try:
        auth = netrc.netrc().authenticators(host) if host else None
    except (OSError, netrc.NetrcParseError):
        auth = None
    if auth and auth[2]:
        return auth[0] or "__token__", auth[2]
    return None


def upload(wheel: Path, project: Project, url: str) -> None:
    data = wheel.read_bytes()
    fields = {":action": "file_upload", "protocol_version": "1", "metadata_version": "2.1",
              "name": project.name, "version": project.version, "filetype": "bdist_wheel", "pyversion": "py3",
              "sha256_digest": hashlib.sha256(data).hexdigest()}
    boundary = uuid.uuid4().hex
    body = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items())
    body += (f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{wheel.name}"\r\n'
             "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "User-Agent": "swamp"}
    auth = credentials(url)
    if auth:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            resp.read()
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace").strip().splitlines()[:1]
        hint = {401: "set TWINE_USERNAME/TWINE_PASSWORD, or the index's entry in ~/.pypirc or ~/.netrc",
                403: "these credentials may not upload to this index",
                409: "that version is published already: raise the version in pyproject.toml"}.get(e.code)
        if e.code == 400 and "exists" in " ".join(detail):
            hint = "that version is published already: raise the version in pyproject.toml"
        raise IndexError_(f"uploading {wheel.name} to {url} failed: {e.code} {' '.join(detail)}".strip(),
                          hint=hint) from None
    except (urllib.error.URLError, OSError) as e:
        raise IndexError_(f"could not reach {url}: {getattr(e, 'reason', e)}") from None
