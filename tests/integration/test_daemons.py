"""`swamp serve daemon` and `swamp worker daemon` (issue 26): the unit each
writes (the options given, every value kept as text, no secret in it), a
clear exit 1 where no service manager answers (as on CI), and enable /
status / disable driving a service manager, here a stand-in `systemctl`
that records what it is asked."""

from __future__ import annotations

import os
import plistlib
import shlex
import sys
from pathlib import Path

import pytest

from tests.helpers import cli, init_repo

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the systemd units of Linux")

FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "{log}"
case "$2" in
  is-enabled) echo enabled ;;
  is-active) echo active ;;
esac
exit 0
"""


@pytest.fixture
def repo(tmp_path):
    return init_repo(tmp_path / "infra")


def _env(tmp_path: Path, systemctl: str | None = None) -> dict:
    """HOME and XDG_CONFIG_HOME in the scratch folder; PATH holding only
    the stand-in systemctl, if any (so the machine's own is never asked)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if systemctl is not None:
        tool = bin_dir / "systemctl"
        tool.write_text(systemctl)
        tool.chmod(0o755)
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config"), "PATH": str(bin_dir)}


def _exec_start(text: str) -> list[str]:
    """ExecStart's arguments as systemd reads them (the subset swamp writes:
    double quotes with \\\\ and \\", then $$ and %% for $ and %)."""
    [line] = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    return [w.replace("$$", "$").replace("%%", "%") for w in shlex.split(line[len("ExecStart="):])]


def test_the_serve_unit_runs_serve_with_the_options_given_as_text(repo, tmp_path):
    env = {**_env(tmp_path), "SWAMP_SERVE_TOKEN": "tok-in-env-0123456789", "SWAMP_WEBHOOK_DEPLOY_SECRET": "s" * 20}
    r = cli(repo, "serve", "daemon", "enable", "--dry-run", "--port", "9191", "--dashboard",
            "--schedule", "nightly=deploy@0 3 * * *", "--webhook", "deploy=deploy",
            "--allow-host", "$HOME%h", "--token", "tok-on-the-line-0123456789", env=env)
    assert r.code == 0, r
    text = r.data["text"]
    assert r.data["dryRun"] is True and r.data["enabled"] is False
    assert _exec_start(text) == [sys.executable, "-m", "swamp", "--repo-dir", str(repo), "serve",
                                 "--host", "127.0.0.1", "--port", "9191", "--auth-mode", "token", "--dashboard",
                                 "--schedule", "nightly=deploy@0 3 * * *", "--webhook", "deploy=deploy",
                                 "--allow-host", "$HOME%h"]
    assert "--allow-host \"$$HOME%%h\"" in text  # never expanded by systemd
    for secret in ("tok-in-env", "tok-on-the-line", "s" * 20):
        assert secret not in text
    assert f"WorkingDirectory={repo}" in text and "Restart=on-failure" in text
    assert r.data["name"].startswith("swamp-serve-infra-")
    assert not Path(r.data["unit"]).exists()  # a dry run writes nothing
    human = cli(repo, "serve", "daemon", "enable", "--dry-run", json=False, env=_env(tmp_path))
    assert human.code == 0 and human.stdout.startswith("# Written by swamp") and "[Service]" in human.stdout


def test_the_worker_unit_runs_worker_start(repo, tmp_path):
    r = cli(repo, "worker", "daemon", "enable", "--dry-run", "--scheduler", "tls://10.0.0.5:8786",
            "--label", "region=eu", "--name", "eu-1", "--team-certs", str(tmp_path / "certs"), env=_env(tmp_path))
    assert r.code == 0, r
    assert _exec_start(r.data["text"])[5:] == ["worker", "start", "--scheduler", "tls://10.0.0.5:8786",
                                               "--label", "region=eu", "--concurrency", "1", "--name", "eu-1",
                                               "--team-certs", str(tmp_path / "certs")]
    bad = cli(repo, "worker", "daemon", "enable", "--dry-run", "--scheduler", "tls://x:1", "--label", "nolabel",
              env=_env(tmp_path))
    assert bad.code in (1, 2) and "nolabel" in bad.error["error"]


@pytest.mark.parametrize("kind", ["serve", "worker"])
@pytest.mark.parametrize("how", ["no systemctl", "no user manager"])
def test_without_systemd_each_command_says_so_and_writes_nothing(repo, tmp_path, kind, how):
    broken = "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"
    env = _env(tmp_path, None if how == "no systemctl" else broken)
    extra = ["--scheduler", "tls://10.0.0.5:8786"] if kind == "worker" else []
    for args in (["enable", *extra], ["status"], ["disable"]):
        r = cli(repo, kind, "daemon", *args, env=env)
        assert r.code == 1 and r.error["code"] == "no_service_manager", (args, r)
        assert "systemd" in r.error["error"] and "--dry-run" in r.error["hint"]
        human = cli(repo, kind, "daemon", *args, env=env, json=False)
        assert human.code == 1 and human.stderr.startswith("error: ") and "Traceback" not in human.stderr
    assert not (tmp_path / "config").exists()


def test_enable_status_disable_drive_the_user_manager(repo, tmp_path):
    log = tmp_path / "systemctl.log"
    env = _env(tmp_path, FAKE_SYSTEMCTL.format(log=log))
    on = cli(repo, "serve", "daemon", "enable", "--port", "9292", env=env)
    assert on.code == 0 and on.data["enabled"] is True, on
    unit = Path(on.data["unit"])
    name = on.data["name"]
    assert unit == tmp_path / "config" / "systemd" / "user" / f"{name}.service"
    assert unit.read_text() == on.data["text"] and unit.stat().st_mode & 0o777 == 0o644
    assert f"--user enable --now {name}.service" in log.read_text()
    assert "--user daemon-reload" in log.read_text()

    st = cli(repo, "serve", "daemon", "status", env=env)
    assert st.code == 0 and st.data["installed"] and st.data["enabled"] and st.data["active"], st
    assert "--port 9292" in st.data["command"]

    off = cli(repo, "serve", "daemon", "disable", env=env)
    assert off.code == 0 and off.data["removed"] is True and not unit.exists()
    assert f"--user disable --now {name}.service" in log.read_text()
    again = cli(repo, "serve", "daemon", "disable", env=env)
    assert again.code == 0 and again.data["removed"] is False
    assert cli(repo, "serve", "daemon", "status", env=env).data["installed"] is False


def test_an_env_file_is_named_never_copied_and_must_be_private(repo, tmp_path):
    env_file = tmp_path / "serve.env"
    env_file.write_text("SWAMP_WEBHOOK_DEPLOY_SECRET=abcdefghijklmnopqrstuvwxyz\n")
    env_file.chmod(0o644)
    r = cli(repo, "serve", "daemon", "enable", "--dry-run", "--env-file", str(env_file), env=_env(tmp_path))
    assert r.code == 1 and "chmod 600" in r.error["hint"]
    env_file.chmod(0o600)
    r = cli(repo, "serve", "daemon", "enable", "--dry-run", "--env-file", str(env_file), env=_env(tmp_path))
    assert r.code == 0 and f"EnvironmentFile={env_file}" in r.data["text"]
    assert "abcdefghij" not in r.data["text"]


def test_a_launchd_agent_runs_the_same_arguments(tmp_path):
    from swamp.app.daemons import render

    env_file = str(tmp_path / "my env")
    name, text = render("serve", tmp_path, ["--port", "9090", "--allow-host", "$HOME"], env_file, "launchd")
    doc = plistlib.loads(text.encode())
    assert doc["Label"] == f"club.swamp.{name}" and doc["WorkingDirectory"] == str(tmp_path)
    program = doc["ProgramArguments"]
    assert program[:2] == ["/bin/sh", "-c"] and shlex.quote(env_file) in program[2]
    assert program[4:] == [sys.executable, "-m", "swamp", "--repo-dir", str(tmp_path), "serve", "--port", "9090",
                           "--allow-host", "$HOME"]  # after "$@": arguments, never parsed by the shell
    assert os.path.basename(doc["StandardOutPath"]).startswith(name)


def test_quotes_backslashes_and_line_breaks_stay_text(tmp_path):
    from swamp.app.daemons import render
    from swamp.errors import UsageError

    tricky = ['a "quoted" word', "back\\slash", "semi;colon && rm -rf ~", "${HOME} %u"]
    _, text = render("serve", tmp_path, [x for t in tricky for x in ("--allow-host", t)], None, "systemd")
    assert _exec_start(text)[-8:] == [x for t in tricky for x in ("--allow-host", t)]
    with pytest.raises(UsageError):
        render("serve", tmp_path, ["--allow-host", "two\nlines"], None, "systemd")
