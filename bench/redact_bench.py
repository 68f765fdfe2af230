"""What masking a multi-line secret line by line costs: redaction of a
command's output (MiB/s) with no secret, with five one-line tokens, and
with a PEM key of LINES lines registered, through ``redact_bytes`` (a
result document) and through ``StreamRedactor`` in 64 KiB chunks (a `log`
file), beside the baseline of the same data searched for the whole
secrets only (what redaction did before lines were registered).

    .venv/bin/python bench/redact_bench.py [--mib 40] [--lines 40]

The cost grows with the number of things masked (each is one search of the
data), not with how the data is cut."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from swamp.vault import redact  # noqa: E402

CHUNK = 64 * 1024


def pem(lines: int) -> str:
    body = os.urandom(lines * 32).hex()  # 64 hex characters a line
    return "\n".join(["-----BEGIN PRIVATE KEY-----", *(body[i:i + 64] for i in range(0, len(body), 64)),
                      "-----END PRIVATE KEY-----"])


def rate(mib: float, fn) -> float:
    t = time.perf_counter()
    fn()
    return mib / (time.perf_counter() - t)


def measure(data: bytes, mib: float) -> dict:
    def streamed():
        r = redact.StreamRedactor()
        for i in range(0, len(data), CHUNK):
            r.feed(data[i:i + CHUNK])
        r.flush()

    return {"patterns": len(redact._ordered), "redact_bytes_mib_s": round(rate(mib, lambda: redact.redact_bytes(data)), 1),
            "stream_mib_s": round(rate(mib, streamed), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=40)
    ap.add_argument("--lines", type=int, default=40)
    a = ap.parse_args()
    line = b"an ordinary line of output from a build tool, nothing secret\n"
    data = (line * (int(a.mib * (1 << 20)) // len(line) + 1))[: int(a.mib * (1 << 20))]
    key = pem(a.lines)
    tokens = [f"token-{i}-{os.urandom(8).hex()}" for i in range(5)]
    results = {}
    redact.clear()
    results["no secret"] = measure(data, a.mib)
    for t in tokens:
        redact.register_secret(t)
    results["5 tokens"] = measure(data, a.mib)
    # baseline: the whole PEM searched as one value (and its JSON form), no lines
    whole = [key.encode(), json.dumps(key)[1:-1].encode(), *[t.encode() for t in tokens]]
    t0 = time.perf_counter()
    for w in whole:
        _ = w in data
    results["baseline: 5 tokens + PEM whole only"] = {"patterns": len(whole),
                                                      "search_mib_s": round(a.mib / (time.perf_counter() - t0), 1)}
    redact.register_secret(key)
    results[f"5 tokens + PEM of {a.lines} lines"] = measure(data, a.mib)
    redact.clear()
    for name, r in results.items():
        print(f"{name:40} {r}")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "redact_bench.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
