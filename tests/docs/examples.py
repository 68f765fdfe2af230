"""Find the examples in the documentation and turn each into something to run.

The convention (also in tests/README.md and docs/index.md, "Writing docs"):

- Pages: README.md, src/swamp/repo/AGENTS.md (what `swamp repo init` writes)
  and docs/*.md except docs/cli.md (generated).
- A ```bash block (or ```sh, ```shell) runs as a shell script, `set -e`, in
  the page's scratch directory, after the page's earlier blocks. The
  directory a block ends in and the variables it exports carry over to the
  page's next block. Output is not compared.
- A bash block whose first line starts with `$ ` is a transcript: the `$`
  lines run, the other lines are their output. A command whose shown
  output starts with `error:` must fail (exit non-zero); any other must
  succeed. In any shell block, a command whose comment is `# exits N`, or
  starts with `# exits N:`, must exit N (and the block goes on).
- A ```yaml, ```python, ```toml or ```json block that names a file is
  written to that file (relative to the directory the page's blocks are in
  at that point) before the page's later blocks run. It names the file by a
  first line `# path/to/file.ext`, or by `<!-- example: file path -->` just
  before the block.
- Other blocks (```text, ```console, and files that name no path) are
  illustrations and are not run.
- HTML comments just before a block change what the test does:
  `<!-- example: skip "why" -->` skips it (the reason shows in the test
  report); `<!-- example: s3 -->` runs it against the SeaweedFS fixture: in
  each `swamp datastore setup s3` line the `--endpoint-url` becomes the
  server's (added when missing) and each `--bucket NAME` a fresh bucket
  made for the page.
- Paths under `/tmp/` in a bash block are moved under the page's scratch
  directory, so an example may say `swamp repo init /tmp/demo` and still
  start from nothing.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

SHELL_LANGS = {"bash", "sh", "shell"}
FILE_LANGS = {"yaml", "yml", "python", "py", "toml", "json"}

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<lang>[\w+-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*example:\s*(?P<body>.*?)\s*-->\s*$")
_PATH_COMMENT = re.compile(r"^#\s*(?P<path>[\w./<>-]+\.(?:ya?ml|py|toml|json|sh|txt))\s*$")


def pages() -> list[Path]:
    """Every page whose examples run, as paths relative to the repository."""
    found = [Path("README.md"), Path("src/swamp/repo/AGENTS.md")]
    found += sorted(p.relative_to(REPO_ROOT) for p in (REPO_ROOT / "docs").glob("*.md") if p.name != "cli.md")
    return found


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    markers: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        if self.page == "README.md" and "bash scripts/test.sh" in self.text:
            # README must start with exactly its two commands, so this skip is
            # decided here rather than by a marker above them.
            return "sets up a machine from scratch; CI runs the second line itself (.ci/run)"
        for m in self.markers:
            if m == "skip" or m.startswith("skip "):
                reason = m[4:].strip().strip('"').strip("'")
                return reason or "marked skip"
        return None

    @property
    def needs_s3(self) -> bool:
        return "s3" in self.markers

    @property
    def file(self) -> str | None:
        for m in self.markers:
            if m.startswith("file "):
                return m[5:].strip()
        if self.lang in FILE_LANGS:
            first = self.text.split("\n", 1)[0]
            match = _PATH_COMMENT.match(first)
            if match and "<" not in match["path"]:
                return match["path"]
        return None

    @property
    def kind(self) -> str | None:
        """'shell', 'transcript', 'file', or None (an illustration: not run)."""
        if self.lang in SHELL_LANGS:
            first = next((ln for ln in self.text.splitlines() if ln.strip()), "")
            return "transcript" if first.startswith("$ ") else "shell"
        if self.file:
            return "file"
        return None


@functools.lru_cache(maxsize=None)
def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, with the example markers just before each
    (read once per session: the tests are named by these line numbers)."""
    lines = (REPO_ROOT / page).read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m["indent"]), m["fence"], m["lang"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence) and lines[i].strip() == fence[0] * len(lines[i].strip())):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        markers: list[str] = []
        j = start - 1
        while j >= 0 and (not lines[j].strip() or _MARKER.match(lines[j])):
            mm = _MARKER.match(lines[j])
            if mm:
                markers.insert(0, mm["body"])
            j -= 1
        found.append(Block(str(page), start + 1, lang, "\n".join(body) + "\n", markers))
    return found


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


# ------------------------------------------------------------ shell scripts
def transcript_script(text: str) -> str:
    """A `$ command` transcript as a script: each command must succeed, or,
    when its shown output starts with `error:`, must fail."""
    commands: list[tuple[str, bool]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            i += 1
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        fails = bool(output) and output[0].startswith("error:")
        commands.append((cmd, fails))
    out = []
    for cmd, fails in commands:
        if fails:
            out.append(f"if {cmd}; then echo {shlex.quote('expected to fail: ' + cmd)} >&2; exit 1; fi")
        else:
            out.append(cmd)
    return "\n".join(out) + "\n"


_EXITS = re.compile(r"^(?P<cmd>[^#]*?\S)\s+#\s*exits?\s+(?P<code>\d+)(?::.*)?\s*$")


def expect_exit_codes(text: str) -> str:
    """A command line whose comment is `# exits N`, or starts with
    `# exits N:` (`exit` works too), must exit N; the script goes on after
    it. ("# exits 1 when ..." is prose, not an expectation.)"""
    out = []
    for line in text.splitlines():
        m = _EXITS.match(line)
        if m and not line.rstrip().endswith("\\"):
            code, cmd = m["code"], m["cmd"]
            out.append(f"__rc=0; {cmd} || __rc=$?; if [ $__rc -ne {code} ]; then "
                       f"echo {shlex.quote(f'expected exit {code}: {cmd}')} \"(got $__rc)\" >&2; exit 1; fi")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


_SETUP_S3 = re.compile(r"swamp datastore setup s3\b[^\n]*")


def s3_substitute(text: str, endpoint: str, bucket_for) -> str:
    """In each `swamp datastore setup s3` line: the fixture's endpoint, and a
    bucket made for this page instead of the one named."""

    def fix(m: re.Match) -> str:
        line = m.group(0)
        line = re.sub(r"--bucket[ =](\S+)", lambda b: f"--bucket {bucket_for(b.group(1))}", line)
        if "--endpoint-url" in line:
            line = re.sub(r"--endpoint-url[ =]\S+", f"--endpoint-url {endpoint}", line)
        else:
            line = line.replace("setup s3", f"setup s3 --endpoint-url {endpoint}", 1)
        return line

    return _SETUP_S3.sub(fix, text)


def move_tmp(text: str, tmp: Path) -> str:
    return re.sub(r"(?<![\w.])/tmp/", f"{tmp}/", text)
