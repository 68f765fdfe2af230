"""The secrets of the process itself: values of its own environment whose
names say they are credentials (serve's webhook secrets, AWS keys, tokens)
are registered with the redactor, so that if one reaches any output (a
step that was given it on purpose, an error message) it is masked there as
a vault secret is. Steps never inherit them (models/step_environment.py);
this is the second line."""

from __future__ import annotations

import os
import re

from swamp.vault.redact import register_secret

#: a name holding one of these words (any case) holds a credential
_SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_KEY|"
                          r"AUTH(?!OR)|COOKIE|SIGNING|(^|_)KEY$|(^|_)PASS$|(^|_)DSN$", re.IGNORECASE)
#: ... unless it names where one is kept, not the value
_LOCATION = ("_SOCK", "_PATH", "_FILE", "_DIR", "_HOST", "_PORT", "_URL_FILE")
#: shorter values ("1", "true", "none") are settings, not secrets
MIN_VALUE_LEN = 8


def looks_secret(name: str, value: str) -> bool:
    return (len(value) >= MIN_VALUE_LEN and _SECRET_NAME.search(name) is not None
            and not name.upper().endswith(_LOCATION))


def register_process_secrets(environ=None) -> None:
    """Register every secret-looking value of ``environ`` (this process's
    environment by default). Cheap enough for every method run."""
    for name, value in list((os.environ if environ is None else environ).items()):
        if looks_secret(name, value):
            register_secret(value)
