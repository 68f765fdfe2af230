"""Writing an extension: `extension new`, `check`, `fmt`, `publish`, and a
published one pulled and run (a real pypiserver, real wheels built by pip
with the scaffold's build backend)."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo


@pytest.mark.slow
def test_new_check_publish_then_pull_and_run(tmp_path, pypi):
    made = cli(None, "extension", "new", "auth-one", "--path", tmp_path / "auth-one", cwd=tmp_path)
    assert made.code == 0, made
    assert {"pyproject.toml", "README.md", "tests/test_model.py", "src/auth_one/model.py"} <= set(made.data["files"])

    ext = tmp_path / "auth-one"
    ok = cli(None, "extension", "check", ext, "--index", pypi.url, cwd=tmp_path)
    assert ok.code == 0, ok
    assert ok.data["valid"] and ok.data["types"] == ["auth-one/hello"]

    pub = cli(None, "extension", "publish", ext, "--index", pypi.url, cwd=tmp_path)
    assert pub.code == 0, pub
    assert (pypi.packages / "auth_one-0.1.0-py3-none-any.whl").is_file()
    again = cli(None, "extension", "check", ext, "--index", pypi.url, cwd=tmp_path)
    assert again.code == 1 and "already on" in again.data["errors"][0]["message"]

    repo = init_repo(tmp_path / "repo")
    assert cli(repo, "extension", "pull", "auth-one", "--index", pypi.url).code == 0
    assert cli(repo, "model", "create", "auth-one/hello", "hi").code == 0
    run = cli(repo, "model", "method", "run", "hi", "greet")
    assert run.code == 0, run


@pytest.mark.slow
def test_check_names_the_file_and_line_of_a_broken_type(tmp_path):
    ext = tmp_path / "auth-broken"
    assert cli(None, "extension", "new", "auth-broken", "--path", ext, cwd=tmp_path).code == 0
    model = ext / "src" / "auth_broken" / "model.py"
    lines = model.read_text().splitlines()
    lines.insert(3, 'raise RuntimeError("no config here")')
    model.write_text("\n".join(lines) + "\n")
    bad = cli(None, "extension", "check", ext, cwd=tmp_path)
    assert bad.code == 1, bad
    [err] = bad.data["errors"]
    assert err["file"] == str(model) and err["line"] == 4 and "no config here" in err["message"]


@pytest.mark.slow
def test_check_refuses_a_method_without_description(tmp_path):
    ext = tmp_path / "auth-mute"
    assert cli(None, "extension", "new", "auth-mute", "--path", ext, cwd=tmp_path).code == 0
    model = ext / "src" / "auth_mute" / "model.py"
    model.write_text(model.read_text().replace('description="Write a greeting"', 'description=""'))
    bad = cli(None, "extension", "check", ext, cwd=tmp_path)
    assert bad.code == 1 and "greet has no description" in bad.data["errors"][0]["message"], bad


def test_new_refuses_a_directory_in_use(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "file").write_text("mine")
    r = cli(None, "extension", "new", "x", "--path", tmp_path / "x", cwd=tmp_path)
    assert r.code == 2 and "not empty" in r.error["error"]


def test_fmt_without_ruff_says_it_skipped(tmp_path, monkeypatch):
    from swamp.extensions import authoring

    monkeypatch.setattr(authoring, "ruff", lambda: None)
    r = authoring.fmt(tmp_path, check=True)
    assert r["skipped"] and "ruff is not installed" in r["message"]


@pytest.mark.slow
def test_a_directory_of_wheels_is_an_index_to_publish_to_and_pull_from(tmp_path):
    ext = tmp_path / "dir-ext"
    assert cli(None, "extension", "new", "dir-ext", "--path", ext, cwd=tmp_path).code == 0
    pub = cli(None, "extension", "publish", ext, "--index", tmp_path / "wheels", cwd=tmp_path)
    assert pub.code == 0, pub
    repo = init_repo(tmp_path / "repo")
    pulled = cli(repo, "extension", "pull", "dir-ext", "--index", tmp_path / "wheels")
    assert pulled.code == 0 and pulled.data["index"] == (tmp_path / "wheels").resolve().as_uri() + "/", pulled


@pytest.mark.slow
def test_a_local_checkout_loads_without_publishing_and_ahead_of_its_pin(tmp_path, pypi):
    from tests.extensions.wheels import make_wheel

    repo = init_repo(tmp_path / "repo")
    make_wheel(pypi.packages, "src-dev", "1.0", types=("src-dev/hello",))
    assert cli(repo, "extension", "pull", "src-dev", "--index", pypi.url).code == 0
    ext = tmp_path / "src-dev"
    assert cli(None, "extension", "new", "src-dev", "--path", ext, cwd=tmp_path).code == 0

    added = cli(repo, "extension", "source", "add", ext)
    assert added.code == 0 and added.data["types"] == ["src-dev/hello"], added
    assert cli(repo, "extension", "source", "list").data["sources"][0]["path"] == str(ext.resolve())
    assert cli(repo, "model", "create", "src-dev/hello", "dev").code == 0
    # the checkout's method (greet), not the pinned wheel's (hello)
    assert cli(repo, "model", "method", "run", "dev", "greet").code == 0
    model = ext / "src" / "src_dev" / "model.py"
    model.write_text(model.read_text().replace('"Write a greeting"', '"Write a greeting, edited"'))
    described = cli(repo, "model", "type", "describe", "src-dev/hello")
    assert described.data["methods"]["greet"]["description"] == "Write a greeting, edited"  # no re-add needed

    assert cli(repo, "extension", "source", "rm", "src-dev").code == 0
    assert cli(repo, "model", "method", "run", "dev", "hello").code == 0  # the pin again


@pytest.mark.slow
def test_check_refuses_a_schema_that_is_not_json_schema(tmp_path):
    ext = tmp_path / "auth-schema"
    assert cli(None, "extension", "new", "auth-schema", "--path", ext, cwd=tmp_path).code == 0
    model = ext / "src" / "auth_schema" / "model.py"
    model.write_text(model.read_text().replace(
        'class Greeting(BaseModel):\n    text: str\n',
        'class Opaque:\n    pass\n\n\nclass Greeting(BaseModel):\n'
        '    model_config = {"arbitrary_types_allowed": True}\n    text: str\n    blob: Opaque | None = None\n'))
    bad = cli(None, "extension", "check", ext, cwd=tmp_path)
    assert bad.code == 1, bad
    assert "auth-schema/hello: invalid schema" in bad.data["errors"][0]["message"], bad
