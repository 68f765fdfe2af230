"""A client for any package index that speaks PEP 691 (JSON) or PEP 503
(HTML): PyPI, a private index, devpi, pypiserver; and a ``file://``
directory of wheels. Only wheels are considered: an extension is installed
by unpacking wheels, never by building anything."""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from swamp.errors import IndexError_
from swamp.extensions.names import normalize

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, text/html;q=0.1"
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str
    #: what the index says the sha256 is (None when it says nothing)
    sha256: str | None
    project: str
    version: str
    yanked: bool = False


def parse_wheel_name(filename: str) -> tuple[str, str] | None:
    """(normalized project, version) of a wheel file name, or None."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        return None
    return normalize(parts[0]), parts[1]


def normalize_url(url: str) -> str:
    url = url.strip()
    if "://" not in url:  # a local directory
        return Path(url).resolve().as_uri() + "/"
    return url if url.endswith("/") else url + "/"


class Index:
    def __init__(self, url: str) -> None:
        self.url = normalize_url(url)

    # ------------------------------------------------------------ listing
    def files(self, project: str) -> list[IndexFile]:
        """Every wheel the index has for a project ([] when it has none)."""
        project = normalize(project)
        if self.url.startswith("file:"):
            return self._local_files(project)
        body, ctype, base = self._get(self.url + project + "/", missing_ok=True)
        if body is None:
            return []
        if ctype.startswith(JSON_TYPE) or ctype.startswith("application/json"):
            doc = json.loads(body)
            links = [(f["filename"], urllib.parse.urljoin(base, f["url"]), (f.get("hashes") or {}).get("sha256"),
                      bool(f.get("yanked"))) for f in doc.get("files", [])]
        else:
            links = []
            for href, text, attrs in _anchors(body.decode("utf-8", "replace")):
                url, _, frag = urllib.parse.urljoin(base, href).partition("#")
                sha = frag[len("sha256="):] if frag.startswith("sha256=") else None
                name = text.strip() or url.rsplit("/", 1)[-1]
                links.append((name, url, sha, "data-yanked" in attrs))
        out = []
        for filename, url, sha, yanked in links:
            parsed = parse_wheel_name(filename)
            if parsed and parsed[0] == project:
                out.append(IndexFile(filename, url, sha, parsed[0], parsed[1], yanked))
        return out

    def projects(self) -> list[str]:
        """Every project name the index lists (normalized, sorted)."""
        if self.url.startswith("file:"):
            root = path_of(self.url)
            names = {p[0] for f in root.glob("**/*.whl") if (p := parse_wheel_name(f.name))}
            return sorted(names)
        body, ctype, _ = self._get(self.url)
        if ctype.startswith(JSON_TYPE) or ctype.startswith("application/json"):
            names = [p["name"] for p in json.loads(body).get("projects", [])]
        else:
            names = [text for _, text, _ in _anchors(body.decode("utf-8", "replace"))]
        return sorted({normalize(n.strip()) for n in names if n.strip()})

    def _local_files(self, project: str) -> list[IndexFile]:
        root = path_of(self.url)
        out = []
        for f in sorted([*root.glob("*.whl"), *root.glob(f"{project}/*.whl")]):
            parsed = parse_wheel_name(f.name)
            if parsed and parsed[0] == project:
                out.append(IndexFile(f.name, f.as_uri(), None, parsed[0], parsed[1]))
        return out

    # ------------------------------------------------------------ fetching
    def download(self, file: IndexFile, dest: Path) -> str:
        """Download a file to ``dest``; returns its sha256. Checks what the
        index says the hash is, when it says."""
        h = hashlib.sha256()
        try:
            with _open(file.url) as resp, open(dest, "wb") as out:
                while chunk := resp.read(1 << 20):
                    h.update(chunk)
                    out.write(chunk)
        except (urllib.error.URLError, OSError) as e:
            raise IndexError_(f"could not download {file.filename} from {self.url}: {_reason(e)}",
                              hint="check the index URL and that it is reachable") from None
        digest = h.hexdigest()
        if file.sha256 and file.sha256.lower() != digest:
            from swamp.errors import HashMismatchError

            raise HashMismatchError(f"{file.filename}: the index says sha256 {file.sha256}, "
                                    f"the bytes downloaded have {digest}",
                                    hint="the index serves a damaged or altered file; nothing was installed")
        return digest

    def _get(self, url: str, *, missing_ok: bool = False) -> tuple[bytes | None, str, str]:
        req = urllib.request.Request(url, headers={"Accept": ACCEPT})
        try:
            with _open(req) as resp:
                return resp.read(), resp.headers.get("Content-Type", ""), resp.geturl()
        except urllib.error.HTTPError as e:
            if e.code == 404 and missing_ok:
                return None, "", url
            raise IndexError_(f"the index {self.url} answered {e.code} for {url}",
                              hint="check the index URL (a PEP 503 'simple' URL, such as "
                                   "https://pypi.org/simple/)") from None
        except (urllib.error.URLError, OSError) as e:
            raise IndexError_(f"could not reach the index {self.url}: {_reason(e)}",
                              hint="check the URL and the network") from None


def _open(req):
    return urllib.request.urlopen(req, timeout=TIMEOUT_S)


def _reason(e: Exception) -> str:
    return str(getattr(e, "reason", None) or e)


def path_of(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, dict]] = []
        self._href: str | None = None
        self._attrs: dict = {}
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._attrs = dict(attrs)
            self._href = self._attrs.get("href")
            self._text = []

    def handle_data(self, data):
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._href is not None:
            self.found.append((self._href, "".join(self._text), self._attrs))
            self._href = None


def _anchors(html: str) -> list[tuple[str, str, dict]]:
    p = _Anchors()
    p.feed(html)
    return p.found


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


