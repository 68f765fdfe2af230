"""Cron expressions: the parser lives in ``swamp.util.cron`` (workflow files
validate ``trigger.schedule`` with it too)."""

from swamp.util.cron import Cron  # noqa: F401
