"""Fixtures of the vault tests: moto's server mode (a local AWS API) for
the aws_secrets_manager vault."""

from tests.fixtures.moto_server import moto_server  # noqa: F401  (the session fixture)
