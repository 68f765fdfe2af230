"""The options that say how a command reaches a Dask scheduler
(app/worker_fleet.link_settings): where the team's certificates are, which one this
process presents, and the explicit flag that allows a plain tcp:// link.

Decorating a command with ``link_options(...)`` gives its callback one
``link`` argument instead of three: the link settings, or None when none
of them was given (the defaults; what the fast lane passes too)."""

from __future__ import annotations

import functools
from pathlib import Path

import click


def link_options(insecure_flag: str = "--insecure"):
    """``insecure_flag``: the flag's name on this command (``swamp serve``
    already has an --insecure of its own, about its HTTP exposure)."""
    dest = insecure_flag.lstrip("-").replace("-", "_")

    def decorate(f):
        @click.option("--team-certs", "team_certs", envvar="SWAMP_TEAM_CERTS", metavar="DIR",
                      type=click.Path(file_okay=False, path_type=Path),
                      help="The folder of the team's certificates (swamp docs workers). Default: $SWAMP_TEAM_CERTS, "
                           "or ~/.config/swamp/team-certs.")
        @click.option("--cert-name", envvar="SWAMP_CERT_NAME", metavar="NAME",
                      help="The team certificate this process presents on a tls:// scheduler. Default: "
                           "$SWAMP_CERT_NAME, or the worker's --name, 'scheduler', 'dispatcher'.")
        @click.option(insecure_flag, dest, is_flag=True,
                      help="Allow a tcp:// scheduler: NOT authenticated, NOT encrypted; anyone who reaches it "
                           "runs code on the workers and reads the steps' secrets. Only on a network only you reach.")
        @functools.wraps(f)
        def wrapper(*args, team_certs=None, cert_name=None, **kwargs):
            from swamp.app.worker_fleet import link_settings

            kwargs["link"] = link_settings(certs_dir=team_certs, cert_name=cert_name, insecure=bool(kwargs.pop(dest)))
            return f(*args, **kwargs)

        return wrapper

    return decorate
