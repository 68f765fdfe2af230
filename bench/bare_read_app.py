"""The baseline of serve_bench.py's reads: a bare Starlette handler under
uvicorn (one process, the same h11 protocol swamp serve runs) that reads one
version's metadata.yaml and answers it as JSON. No access check, no audit,
no datastore: what the framework allows for the same file read.

    BARE_FILE=/path/to/metadata.yaml python bench/bare_read_app.py PORT
    BARE_STORE='{"type": "s3", ...}' BARE_KEY=some/key python bench/bare_read_app.py PORT

With BARE_STORE the handler reads the object with one GET instead."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def build():
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from swamp.util import yamlio

    if os.environ.get("BARE_STORE"):
        from swamp.datastore.objectstore.factory import open_store

        store = open_store({**json.loads(os.environ["BARE_STORE"]), "retry": False})
        key = os.environ["BARE_KEY"]

        def read() -> str:
            return store.get(key)[0].decode()
    else:
        path = Path(os.environ["BARE_FILE"])

        def read() -> str:
            return path.read_text()

    def handler(request):  # a plain def: Starlette runs it in a worker thread, as swamp runs its use cases
        return Response(json.dumps(yamlio.loads(read()), default=str), media_type="application/json")

    return Starlette(routes=[Route("/api/v1/data/{model}/{name}", handler, methods=["GET"])])


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(build(), host="127.0.0.1", port=int(sys.argv[1]), http="h11", log_level="warning",
                access_log=False)
