"""The rename scheme travels as a value (issue 27): an owner's rules hand
the sync engine its version scheme object, and a scheme given as text (a
"module:NAME" the old rules imported by string) is refused, never imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swamp.data.renumber import VERSIONS
from swamp.datastore.sync.rules import PathRules


def test_data_hands_its_version_scheme_object_to_the_engine():
    from swamp.repo.datastores import path_rules

    rules = path_rules()
    assert rules.version_scheme("data/t/x/m/n/3/raw") is VERSIONS
    assert rules.version_scheme("files/3/raw") is None


@pytest.mark.parametrize("named", ["swamp.data.renumber:VERSIONS", "os:system", ""])
def test_a_scheme_named_by_text_is_refused(named):
    with pytest.raises(ValueError, match="version scheme is an object"):
        PathRules.of({"immutable": ["v/{int}/*"], "renumber": named or object()})


def test_refusing_a_named_scheme_imports_nothing():
    code = ("import sys\nfrom swamp.datastore.sync.rules import PathRules\n"
            "try:\n    PathRules.of({'renumber': 'swamp.data.renumber:VERSIONS'})\nexcept ValueError:\n    pass\n"
            "print('swamp.data.renumber' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
