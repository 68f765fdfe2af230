"""A small HTTP/1.1 load generator for the serve benches: ``clients``
keep-alive connections, each sending one GET after another for
``seconds``; prints one JSON line: requests, requests/s, p50 and p99 (ms),
and the statuses seen.

    python bench/http_load.py --port P --path /api/v1/data/hello/result \
        --token T --clients 8 --seconds 5

It runs in a process of its own (asyncio, raw sockets, no HTTP library) so
that what it costs is small beside the server's and never shares the
server's interpreter lock."""

from __future__ import annotations

import argparse
import asyncio
import json
import time


async def client(host: str, port: int, request: bytes, box: dict, start: asyncio.Event,
                 latencies: list[float], statuses: dict) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    await start.wait()
    try:
        while time.perf_counter() < box["until"]:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            latencies.append(time.perf_counter() - t0)
            statuses[status] = statuses.get(status, 0) + 1
    finally:
        writer.close()


async def run(a) -> dict:
    headers = [f"GET {a.path} HTTP/1.1", f"Host: {a.host}:{a.port}", "Accept: application/json"]
    if a.token:
        headers.append(f"Authorization: Bearer {a.token}")
    request = ("\r\n".join(headers) + "\r\n\r\n").encode()
    latencies: list[float] = []
    statuses: dict = {}
    start = asyncio.Event()
    box = {"until": 0.0}  # set once every connection is open
    tasks = [asyncio.ensure_future(client(a.host, a.port, request, box, start, latencies, statuses))
             for _ in range(a.clients)]
    await asyncio.sleep(0.5)  # connections open
    t0 = time.perf_counter()
    box["until"] = t0 + a.seconds
    start.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    xs = sorted(latencies)
    pick = lambda q: round(xs[min(len(xs) - 1, int(len(xs) * q))] * 1000, 2) if xs else None  # noqa: E731
    return {"requests": len(xs), "perS": round(len(xs) / wall, 1), "p50Ms": pick(0.50), "p99Ms": pick(0.99),
            "statuses": {str(k): v for k, v in sorted(statuses.items())}, "clients": a.clients}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--token", default="")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    print(json.dumps(asyncio.run(run(ap.parse_args()))))


if __name__ == "__main__":
    main()
