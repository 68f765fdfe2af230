"""The index client reads PEP 691 JSON as well as PEP 503 HTML (pypiserver,
used by the other tests, answers HTML only): a tiny JSON index served here."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from swamp.errors import HashMismatchError
from swamp.extensions.index import JSON_TYPE, Index


@pytest.fixture
def json_index():
    wheel = b"not really a wheel"
    files = {"/simple/": {"meta": {"api-version": "1.0"}, "projects": [{"name": "Json_Ext"}, {"name": "other"}]},
             "/simple/json-ext/": {"meta": {"api-version": "1.0"}, "name": "json-ext", "files": [
                 {"filename": "json_ext-1.0-py3-none-any.whl", "url": "../../files/json_ext-1.0-py3-none-any.whl",
                  "hashes": {"sha256": hashlib.sha256(wheel).hexdigest()}},
                 {"filename": "json_ext-0.9-py3-none-any.whl", "url": "/files/bad.whl",
                  "hashes": {"sha256": "0" * 64}, "yanked": "broken"},
                 {"filename": "json_ext-1.0.tar.gz", "url": "/files/sdist", "hashes": {}}]}}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path in files:
                assert JSON_TYPE in self.headers["Accept"]
                body, ctype = json.dumps(files[self.path]).encode(), JSON_TYPE
            elif self.path.startswith("/files/"):
                body, ctype = wheel, "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    server.shutdown()


def test_json_listing_wheels_only_yanked_marked_and_urls_resolved(json_index, tmp_path):
    ix = Index(json_index)
    assert ix.projects() == ["json-ext", "other"]
    files = {f.version: f for f in ix.files("JSON.ext")}
    assert sorted(files) == ["0.9", "1.0"]  # the sdist is not a candidate
    assert files["0.9"].yanked and not files["1.0"].yanked
    assert files["1.0"].url.endswith("/files/json_ext-1.0-py3-none-any.whl")
    ix.download(files["1.0"], tmp_path / "w.whl")
    with pytest.raises(HashMismatchError):  # the index's own hash is checked too
        ix.download(files["0.9"], tmp_path / "bad.whl")
    assert ix.files("missing") == []
