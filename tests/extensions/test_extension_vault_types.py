"""Vault types (and report types) from extension packages, pinned like
model types: a package that declares only a vault type is published to a
real pypiserver through `swamp extension publish`, pulled on one peer (its
vault type recorded in the shared lockfile), a vault of that type feeds a
secret into a method run, and on a second peer of the same SeaweedFS
datastore the type installs on first use. A vault type nobody pinned is a
clear error that says how to look for one (docs/extensions.md,
docs/vaults.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo, ok

VAULT_EXT = "vt-jsonvault"
VAULT_TYPE = "vt_json_file"
REPORT_EXT = "rt-onlyreport"

VAULT_PYPROJECT = f'''[build-system]
requires = ["hatchling>=1.20"]
build-backend = "hatchling.build"

[project]
name = "{VAULT_EXT}"
version = "0.1.0"
description = "a vault type that keeps its secrets in one JSON file"
requires-python = ">=3.11"
dependencies = []

[project.entry-points."swamp.vault_types"]
{VAULT_TYPE} = "vt_jsonvault.vault:JsonFileType"

[tool.hatch.build.targets.wheel]
packages = ["src/vt_jsonvault"]
'''

VAULT_MODULE = f'''import json
from pathlib import Path

from swamp.errors import NotFoundError
from swamp.vault.types import Setting, VaultType


class JsonFileVault:
    def __init__(self, name, path):
        self.name, self.path = name, Path(path)

    def _doc(self):
        return json.loads(self.path.read_text()) if self.path.is_file() else {{}}

    def _save(self, doc):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(doc, sort_keys=True))

    def create(self):
        if not self.path.is_file():
            self._save({{}})

    def check(self):
        pass

    def location(self):
        return str(self.path)

    def put(self, key, value):
        doc = self._doc()
        replaced = key in doc
        doc[key] = {{"value": value, "meta": doc.get(key, {{}}).get("meta", {{}})}}
        self._save(doc)
        return replaced

    def get(self, key):
        doc = self._doc()
        if key not in doc:
            raise NotFoundError(f"no key {{key!r}} in vault {{self.name}}")
        return doc[key]["value"]

    def exists(self, key):
        return key in self._doc()

    def list_keys(self):
        return sorted(self._doc())

    def delete(self, key):
        doc = self._doc()
        if key not in doc:
            raise NotFoundError(f"no key {{key!r}} in vault {{self.name}}")
        del doc[key]
        self._save(doc)

    def read_meta(self, key):
        return self._doc().get(key, {{}}).get("meta", {{}})

    def write_meta(self, key, meta):
        doc = self._doc()
        doc[key]["meta"] = meta
        self._save(doc)


class JsonFileType(VaultType):
    name = "{VAULT_TYPE}"
    description = "Secrets in one JSON file (a test extension)"
    settings = (Setting("path", "the JSON file", required=True),)

    def open(self, name, settings, secrets_dir):
        return JsonFileVault(name, settings["path"])
'''

REPORT_PYPROJECT = f'''[build-system]
requires = ["hatchling>=1.20"]
build-backend = "hatchling.build"

[project]
name = "{REPORT_EXT}"
version = "0.1.0"
description = "only a report type"
requires-python = ">=3.11"
dependencies = []

[project.entry-points."swamp.report_types"]
counted = "rt_onlyreport.report:counted"

[tool.hatch.build.targets.wheel]
packages = ["src/rt_onlyreport"]
'''

REPORT_MODULE = '''from swamp import Report, ReportType

counted = ReportType("rt-counted", scope="method", description="Which model ran (a test extension)")


@counted.render
def _render(ctx):
    return Report(markdown=f"ran {ctx.model_name}\\n", data={"model": ctx.model_name})
'''

SECRET = "s3cr3t-from-an-extension-vault"


def _write_package(base: Path, name: str, files: dict[str, str]) -> Path:
    root = base / name
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="session")
def published(pypi, tmp_path_factory):
    """The vault-type package and the report-only package, published once
    through `swamp extension publish` (which checks them first)."""
    base = tmp_path_factory.mktemp("vault-ext")
    vault_pkg = _write_package(base, VAULT_EXT, {
        "pyproject.toml": VAULT_PYPROJECT,
        "src/vt_jsonvault/__init__.py": "",
        "src/vt_jsonvault/vault.py": VAULT_MODULE,
    })
    report_pkg = _write_package(base, REPORT_EXT, {
        "pyproject.toml": REPORT_PYPROJECT,
        "src/rt_onlyreport/__init__.py": "",
        "src/rt_onlyreport/report.py": REPORT_MODULE,
    })
    for pkg in (vault_pkg, report_pkg):
        r = cli(None, "extension", "publish", pkg, "--index", pypi.url, cwd=base, timeout=120)
        assert r.code == 0, r
    return pypi.url


def _shell_model(repo: Path, out: Path) -> None:
    d = repo / "models" / "command" / "shell"
    d.mkdir(parents=True, exist_ok=True)
    (d / "deploy.yaml").write_text(
        "type: command/shell\nname: deploy\nglobalArguments:\n"
        f"  run: 'printf %s \"$TOKEN\" > {out}; echo \"token: $TOKEN\"'\n"
        "  env:\n"
        f"    TOKEN: \"${{{{ vault.get('team', 'api.token') }}}}\"\n")


def _installed(repo: Path) -> list[str]:
    root = repo / ".swamp" / "cache" / "extensions"
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if root.is_dir() else []


@pytest.mark.slow
@pytest.mark.s3
def test_a_pinned_vault_type_feeds_a_method_and_installs_on_first_use_on_a_peer(tmp_path, seaweedfs, published):
    args = ["s3", "--bucket", seaweedfs.bucket, "--prefix", seaweedfs.new_prefix(),
            "--endpoint-url", seaweedfs.endpoint_url, "--region", "us-east-1"]
    a, b = init_repo(tmp_path / "a"), init_repo(tmp_path / "b")
    for repo in (a, b):
        ok(repo, "datastore", "setup", *args)

    # Before any pin: the type is unknown, with a hint that says where to look.
    r = cli(a, "vault", "create", VAULT_TYPE, "team", "--set", f"path={tmp_path / 'secrets.json'}")
    assert r.code != 0 and "unknown vault type" in r.stderr and "swamp extension search" in r.stderr, r
    assert "Traceback" not in r.stderr

    pulled = ok(a, "extension", "pull", VAULT_EXT, "--index", published)
    assert pulled["types"] == [] and pulled["vaultTypes"] == [VAULT_TYPE], pulled
    listed = ok(a, "extension", "list")["extensions"]
    assert [(e["name"], e["vaultTypes"]) for e in listed] == [(VAULT_EXT, [VAULT_TYPE])]
    found = {t["type"]: t for t in ok(a, "vault", "type", "search", "json")["types"]}
    assert found[VAULT_TYPE]["source"] == f"extension {VAULT_EXT} 0.1.0"

    ok(a, "vault", "create", VAULT_TYPE, "team", "--set", f"path={tmp_path / 'secrets.json'}")
    ok(a, "vault", "put", "team", "api.token", input=SECRET)
    out_a = tmp_path / "token-a.txt"
    _shell_model(a, out_a)
    run = ok(a, "model", "method", "run", "deploy", "execute")
    assert run["status"] == "succeeded", run
    assert out_a.read_text() == SECRET  # the value reached the process
    log = cli(a, "data", "get", "deploy", "log", json=False)
    assert SECRET not in log.stdout  # and was masked in what swamp kept

    # Peer b: the shared lockfile pins it; the definitions and vault config come from git.
    ok(b, "datastore", "sync")
    assert _installed(b) == []
    for part in ("models", "vaults"):
        shutil.copytree(a / part, b / part, dirs_exist_ok=True)
    out_b = tmp_path / "token-b.txt"
    _shell_model(b, out_b)
    run = ok(b, "model", "method", "run", "deploy", "execute")
    assert run["status"] == "succeeded", run
    assert out_b.read_text() == SECRET
    assert _installed(b) == [f"{VAULT_EXT}-0.1.0"]  # installed on first use, from the pin
    lock = json.loads((b / ".swamp" / "extensions" / "lockfile.json").read_text())
    assert lock["extensions"][VAULT_EXT]["vaultTypes"] == [VAULT_TYPE]

    # Removing it says which vaults stop working.
    removed = ok(a, "extension", "rm", VAULT_EXT)
    assert removed["vaultTypes"] == [VAULT_TYPE] and removed["usedBy"] == [f"vault team ({VAULT_TYPE})"]


@pytest.mark.slow
def test_a_package_with_only_a_report_type_is_pinned_and_its_report_runs(tmp_path, published):
    repo = init_repo(tmp_path / "repo")
    pulled = ok(repo, "extension", "pull", REPORT_EXT, "--index", published)
    assert pulled["types"] == [] and pulled["reportTypes"] == ["rt-counted"], pulled
    found = {r["name"]: r for r in ok(repo, "report", "search", "rt-")}
    assert found["rt-counted"]["source"] == f"extension {REPORT_EXT} 0.1.0"
    d = repo / "models" / "command" / "shell"
    d.mkdir(parents=True)
    (d / "hi.yaml").write_text("type: command/shell\nname: hi\nglobalArguments:\n  run: 'echo hi'\n")
    rec = ok(repo, "model", "method", "run", "hi", "execute", "--report", "rt-counted")
    assert rec["reports"][0]["status"] == "succeeded", rec
    assert ok(repo, "report", "get", "rt-counted", "--model", "hi")["json"] == {"model": "hi"}


def test_a_vault_whose_type_nobody_pinned_is_a_clear_error(tmp_path):
    repo = init_repo(tmp_path / "repo")
    d = repo / "vaults" / "nobody_pinned"
    d.mkdir(parents=True)
    (d / "orphan.yaml").write_text("name: orphan\ntype: nobody_pinned\ncreatedAt: '2026-11-30T00:00:00Z'\n")
    r = cli(repo, "vault", "list-keys", "orphan")
    text = r.stdout + r.stderr
    assert r.code != 0 and "Traceback" not in text
    assert "unknown vault type 'nobody_pinned'" in text and "swamp extension search nobody" in text, r


@pytest.mark.slow
def test_extension_new_vault_scaffolds_a_vault_type_that_check_validates(tmp_path):
    ext = tmp_path / "acme-vt"
    made = ok(None, "extension", "new", "acme-vt", "--vault", "--path", ext, cwd=tmp_path)
    assert "src/acme_vt/vault.py" in made["files"]
    checked = ok(None, "extension", "check", ext, cwd=tmp_path, timeout=120)
    assert checked["valid"] and checked["types"] == [] and checked["vaultTypes"] == ["acme_vt"], checked
    vault_py = ext / "src" / "acme_vt" / "vault.py"
    vault_py.write_text(vault_py.read_text().replace('name = "acme_vt"', 'name = "Not-A-Name"'))
    bad = cli(None, "extension", "check", ext, cwd=tmp_path, timeout=120)
    assert bad.code == 1
    errors = json.loads(bad.stdout)["errors"]
    assert [(e["file"], e["message"].split(":")[0]) for e in errors] == [(str(vault_py), "vault type JsonFileType")]
    assert errors[0]["line"] and "must match" in errors[0]["message"]
