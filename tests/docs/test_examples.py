"""Every command and file example of README.md, AGENTS.md and docs/ runs, so
none can rot: one test per (page, block), named `page:line`. The convention
is in tests/docs/examples.py (and tests/README.md)."""

from __future__ import annotations

import pytest

from tests.docs.examples import all_blocks, blocks, pages

EXAMPLES = [b for b in all_blocks() if b.kind is not None]


def _param(block):
    marks = [pytest.mark.s3] if block.needs_s3 else []
    if block.skip_reason:
        marks.append(pytest.mark.skip(reason=f"{block.id}: {block.skip_reason}"))
    return pytest.param(block, id=block.id, marks=marks)


@pytest.mark.parametrize("block", [_param(b) for b in EXAMPLES])
def test_example(doc_results, block):
    result = doc_results[block.id]
    if isinstance(result, Exception):
        raise result
    if result is None:  # a file, written for the page's later blocks
        return
    assert result.returncode == 0, (
        f"{block.id}: the {block.lang} example exited {result.returncode}"
        f"{' (timed out)' if result.returncode == -1 else ''}\n"
        f"--- the example\n{block.text}--- its output (last 60 lines)\n"
        + "\n".join(result.stdout.splitlines()[-60:])
    )


def test_every_page_is_seen():
    """The pages are found, and each page with a shell example has one that
    runs or says why it is skipped."""
    names = {str(p) for p in pages()}
    assert {"README.md", "src/swamp/repo/AGENTS.md", "docs/index.md"} <= names
    assert "docs/cli.md" not in names
    for p in pages():
        for b in blocks(p):
            if b.lang in {"bash", "sh", "shell"}:
                assert b.kind in {"shell", "transcript"}, b.id


PARSED = [b for b in all_blocks() if b.lang in {"yaml", "yml", "json", "python", "py", "toml"}]


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id) for b in PARSED])
def test_file_example_parses(block):
    """Every YAML, JSON, Python and TOML block parses, whether a later block
    uses it or it only illustrates (a fragment of a workflow, an output)."""
    import json
    import tomllib

    from swamp.util import yamlio

    if block.lang in {"yaml", "yml"}:
        yamlio.loads(block.text, block.id)
    elif block.lang == "json":
        json.loads(block.text)
    elif block.lang in {"python", "py"}:
        compile(block.text, block.id, "exec")
    else:
        tomllib.loads(block.text)
