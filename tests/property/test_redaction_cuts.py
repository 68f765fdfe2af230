"""Redaction does not depend on where output was cut (issue 23, item 5).

For random secrets (single-line ones and multi-line PEM-like ones) printed
amid random output, and random cuts of that output into chunks, no secret
(and no line of a multi-line secret of at least MIN_LINE_LEN characters)
is left in clear in any stream swamp writes:

- a byte stream written in chunks (a `log` file, ``ctx.file_writer``),
  through ``StreamRedactor``;
- the live lines a command's output is cut into (serve's `log` events, the
  terminal's activity line, a worker's step log), through
  ``process_output``'s line cutter and ``Context.progress``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swamp.models.context import Context
from swamp.util.process_output import _Lines
from swamp.vault import redact

# No "*": a secret spelled with the mask's own character could be re-formed by it.
_CHARS = st.characters(codec="utf-8", exclude_characters="*\n\r", exclude_categories=("Cs",))
_WORD = st.text(_CHARS, min_size=redact.MIN_LEN, max_size=40)
_B64 = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=8, max_size=64)


@st.composite
def pem_like(draw) -> str:
    body = draw(st.lists(_B64, min_size=1, max_size=6))
    kind = draw(st.sampled_from(["PRIVATE KEY", "RSA PRIVATE KEY", "CERTIFICATE"]))
    return "\n".join([f"-----BEGIN {kind}-----", *body, f"-----END {kind}-----"])


@st.composite
def multi_line(draw) -> str:
    return "\n".join(draw(st.lists(st.text(_CHARS, min_size=redact.MIN_LINE_LEN, max_size=30), min_size=2,
                                   max_size=4)))


SECRETS = st.lists(st.one_of(_WORD, pem_like(), multi_line()), min_size=1, max_size=3)
NOISE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@st.composite
def output_and_cuts(draw):
    secrets = draw(SECRETS)
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        parts.append(draw(NOISE))
        parts.append(draw(st.sampled_from(secrets)))
    parts.append(draw(NOISE))
    data = "".join(parts).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    chunks, at = [], 0
    for c in cuts:
        chunks.append(data[at:c])
        at = c
    chunks.append(data[at:])
    return secrets, data, chunks


def _must_not_show(secrets: list[str]) -> set[str]:
    out = set()
    for s in secrets:
        if "\n" in s:
            out.update(line.strip() for line in s.splitlines() if len(line.strip()) >= redact.MIN_LINE_LEN)
        else:
            out.add(s)
    return out


@pytest.fixture(autouse=True)
def _clean_redactor():
    redact.clear()
    yield
    redact.clear()


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])


@PROPERTY
@given(output_and_cuts())
def test_a_stream_cut_anywhere_shows_no_secret(case):
    secrets, data, chunks = case
    redact.clear()
    for s in secrets:
        redact.register_secret(s)
    r = redact.StreamRedactor()
    written = b"".join(r.feed(c) for c in chunks) + r.flush()
    text = written.decode(errors="replace")
    for s in _must_not_show(secrets):
        assert s not in text
    # and it is what redacting the whole output at once gives: nothing lost, nothing doubled
    assert written == redact.redact_bytes(data)


@PROPERTY
@given(output_and_cuts())
def test_live_lines_cut_from_any_chunks_show_no_secret_line(case):
    secrets, _data, chunks = case
    redact.clear()
    for s in secrets:
        redact.register_secret(s)
    ctx = Context(None, None, None, SimpleNamespace(ephemeral=None), None)
    shown: list[str] = []
    ctx.on_log = shown.append
    lines = _Lines(ctx.progress)  # as command/shell cuts its command's output for a listener
    for c in chunks:
        lines.feed(c)
    if lines.pending:
        lines.feed(b"\n")
    for s in _must_not_show(secrets):
        assert not any(s in line for line in shown), s


@PROPERTY
@given(output_and_cuts(), st.integers(1, 80))
def test_large_output_searched_a_block_at_a_time_is_masked_as_searched_whole(case, size):
    secrets, data, _chunks = case
    redact.clear()
    for s in secrets:
        redact.register_secret(s)
    real = redact._block
    redact._block = lambda patterns: size  # as if the output were much larger than a block
    try:
        blockwise, text_blockwise = redact.redact_bytes(data), redact.redact_text(data.decode())
    finally:
        redact._block = real
    assert blockwise == redact._direct(data, redact._ordered_bytes, redact.MASK.encode())
    assert text_blockwise == redact._direct(data.decode(), redact._ordered, redact.MASK)
    for s in _must_not_show(secrets):
        assert s.encode() not in blockwise and s not in text_blockwise
