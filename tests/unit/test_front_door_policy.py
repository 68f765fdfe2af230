"""The front door's rules and the local token's path, without a server."""

from __future__ import annotations

import os
import stat

import pytest

from swamp.errors import SwampError
from swamp.app import logins
from swamp.serve.front_door import DoorPolicy, split_host


@pytest.mark.parametrize("value, want", [
    ("127.0.0.1:9090", ("127.0.0.1", 9090)), ("[::1]:80", ("::1", 80)), ("LocalHost", ("localhost", None)),
    ("[::1]", ("::1", None)), ("::1", None), ("a:b", None), ("a:99999", None), ("", None), ("[::1", None),
])
def test_host_values_are_split_strictly(value, want):
    assert split_host(value) == want


def test_a_loopback_server_answers_only_for_loopback_names_with_its_port():
    door = DoorPolicy(bind_host="127.0.0.1", port=9090)
    for host in ("127.0.0.1:9090", "localhost:9090", "[::1]:9090"):
        assert door.host_allowed(host, "http")
    for host in ("127.0.0.1:9091", "localhost", "attacker.example:9090", "10.0.0.5:9090", "localhost.:9090"):
        assert not door.host_allowed(host, "http"), host


def test_the_default_port_of_the_scheme_may_be_left_out():
    door = DoorPolicy(bind_host="127.0.0.1", port=443)
    assert door.host_allowed("localhost", "https") and not door.host_allowed("localhost", "http")


def test_a_server_on_every_interface_answers_for_addresses_but_not_for_names():
    door = DoorPolicy(bind_host="0.0.0.0", port=9090)
    assert door.host_allowed("10.1.2.3:9090", "http") and door.host_allowed("[fe80::1]:9090", "http")
    assert not door.host_allowed("build.example:9090", "http")


def test_allowed_hosts_with_and_without_a_port_and_the_escape_hatch():
    door = DoorPolicy(port=9090, allow_hosts=("swamp.example", "proxy.example:8443"))
    assert door.host_allowed("swamp.example", "https") and door.host_allowed("SWAMP.example:1", "http")
    assert door.host_allowed("proxy.example:8443", "https") and not door.host_allowed("proxy.example", "https")
    assert DoorPolicy(port=9090, allow_hosts=("*",)).host_allowed("anything.example", "http")


def test_origins_the_servers_own_or_allowed_never_null():
    door = DoorPolicy(port=9090, allow_origins=("https://ops.example",))
    assert door.origin_allowed("http://127.0.0.1:9090", "127.0.0.1:9090", "http")
    assert door.origin_allowed("https://ops.example/", "127.0.0.1:9090", "http")
    for origin in ("null", "http://localhost:9090", "https://127.0.0.1:9090", "http://127.0.0.1:9091"):
        assert not door.origin_allowed(origin, "127.0.0.1:9090", "http"), origin


def test_the_local_token_lives_in_the_xdg_config_home_or_under_home(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    assert logins.token_path("localhost", 9090, env) == tmp_path / "xdg/swamp/serve/127.0.0.1-9090.token"
    env["XDG_CONFIG_HOME"] = "relative/ignored"
    assert logins.token_path("::1", 9090, env) == tmp_path / "home/.config/swamp/serve/127.0.0.1-9090.token"
    assert logins.token_path("build.example", 80, env).name == "build.example-80.token"


def test_the_local_token_is_made_once_private_and_found_by_url(tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    token, path = logins.ensure("127.0.0.1", 9090, env)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert logins.ensure("localhost", 9090, env)[0] == token  # the same server's address: the same token
    assert logins.for_url("http://localhost:9090/", env) == token
    assert logins.for_url("http://127.0.0.1:9091", env) is None  # another server gets nothing
    assert logins.for_url("http://build.example:9090", env) is None
    os.chmod(path, 0o644)
    with pytest.raises(SwampError, match="other users"):
        logins.for_url("http://127.0.0.1:9090", env)
