"""The secrets of the process itself: values of its own environment whose
names say they are credentials (serve's webhook secrets, AWS keys, tokens)
are registered with the redactor, so that if one reaches any output (a
step that was given it on purpose, an error message) it is masked there as
a vault secret is. Steps never inherit them (models/step_environment.py);
this is the second line."""

from __future__ import annotations

import os

from swamp.vault.redact import register_secret

#: a name holding one of these words (any case) holds a credential
_WORDS = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE", "APIKEY", "API_KEY",
          "ACCESS_KEY", "COOKIE", "SIGNING")
#: ... and so does one ending in one of these, or being one
_ENDINGS = ("_KEY", "_PASS", "_DSN")
#: ... unless it names where one is kept, not the value
_LOCATION = ("_SOCK", "_PATH", "_FILE", "_DIR", "_HOST", "_PORT")
#: shorter values ("1", "true", "none") are settings, not secrets
MIN_VALUE_LEN = 8


def looks_secret(name: str, value: str) -> bool:
    if len(value) < MIN_VALUE_LEN:
        return False
    n = name.upper()
    if n.endswith(_LOCATION):
        return False
    return (any(w in n for w in _WORDS) or n.endswith(_ENDINGS) or n in ("KEY", "PASS", "DSN")
            or "AUTH" in n.replace("AUTHOR", ""))  # OAUTH_CLIENT, BASIC_AUTH; not GIT_AUTHOR_NAME


def register_process_secrets(environ=None) -> None:
    """Register every secret-looking value of ``environ`` (this process's
    environment by default). Cheap enough for every method run."""
    for name, value in list((os.environ if environ is None else environ).items()):
        if looks_secret(name, value):
            register_secret(value)
