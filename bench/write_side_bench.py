"""What the write side keeps off a no-op method run and `data get` (issue 17):
each group of modules the run path no longer imports, timed as what it
would add back to the run's own imports today.

    .venv/bin/python bench/write_side_bench.py [--runs 21]

It makes a repository with one command/shell model, runs
`model method run m00 execute` and `data get m00 result` once each under
``python -X importtime`` to learn the modules they import now, then times,
interleaved round-robin (load drift hits all alike), after one warm-up
each, medians:

- ``now``: a process importing exactly those modules (the run's import
  floor, without its work);
- ``now + GROUP``: the same, plus one group the write side removed (each
  group as the code imported it before: ruamel.yaml with a safe load; the
  pydantic schemas of the output record and metadata.yaml, built and
  validated once; dataclasses; datetime; uuid and socket; tempfile;
  hashlib; logging; random; the report modules);
- ``now + all``: every group at once (groups overlap: pydantic brings
  datetime, uuid...; this is the total).

The difference to ``now`` is what that group costs a command's start-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
LAUNCH = "import sys; sys.argv[0] = 'swamp'; from swamp.cli.main import main; main()"

GROUPS = {
    "ruamel.yaml": "from ruamel.yaml import YAML\nYAML(typ='safe').load('a: 1')",
    "pydantic schemas": ("from swamp.models.output_schema import OutputRecordSchema\n"
                         "from swamp.data.metadata import DataMetadata\n"
                         "OutputRecordSchema(id='i', definitionId='d', modelName='m', modelType='a/b', "
                         "modelVersion='1', methodName='x', status='succeeded', startedAt='s', completedAt='c', "
                         "durationMs=1)\n"
                         "DataMetadata(id='i', name='n', version=1, specName='s', kind='file', contentType='t', "
                         "lifetime='infinite', owner={'definitionId': 'd', 'definitionName': 'm', "
                         "'modelType': 'a/b'}, createdAt='c', size=1, sha256='h')"),
    "dataclasses": "import dataclasses",
    "datetime": "import datetime",
    "uuid+socket": "import uuid, socket",
    "tempfile": "import tempfile",
    "hashlib": "import hashlib",
    "logging": "import logging",
    "random": "import random",
    "reports": "import traceback, swamp.reports.store, swamp.reports.api",
}


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("SWAMP_", "OTEL_")) and k != "PYTHONPATH"}
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e["PYTHONPATH"] = str(ROOT / "src")
    return e


def swamp(repo: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess:
    cmd = [PYTHON, *(["-X", "importtime"] if importtime else []), "-c", LAUNCH, *args]
    return subprocess.run(cmd, cwd=repo, env=env(), capture_output=True, text=True, check=True)


def imported(repo: Path, *args: str) -> list[str]:
    err = swamp(repo, *args, importtime=True).stderr
    names = [line.split("|")[2].strip() for line in err.splitlines()
             if line.startswith("import time:") and "self [us]" not in line]
    return list(dict.fromkeys(names))


def floor_code(modules: list[str]) -> str:
    return ("import importlib\nfor m in %r:\n    try:\n        importlib.import_module(m)\n"
            "    except ImportError:\n        pass\n" % (modules,))


def timed(code: str) -> float:
    t = time.perf_counter()
    subprocess.run([PYTHON, "-c", code], env=env(), check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        swamp(repo, "repo", "init")
        swamp(repo, "model", "create", "command/shell", "m00", "--global-arg", "run=true")
        swamp(repo, "model", "method", "run", "m00", "execute")
        for label, args in (("method run", ("model", "method", "run", "m00", "execute")),
                            ("data get", ("data", "get", "m00", "result"))):
            mods = imported(repo, *args)
            base = floor_code(mods)
            variants = {"now": base, **{f"now + {g}": base + code for g, code in GROUPS.items()},
                        "now + all": base + "\n".join(GROUPS.values())}
            times: dict[str, list[float]] = {k: [] for k in variants}
            for code in variants.values():
                timed(code)  # warm-up
            for _ in range(a.runs):
                for k, code in variants.items():
                    times[k].append(timed(code))
            now = statistics.median(times["now"])
            print(f"\n{label}: the {len(mods)} modules it imports now: {now:.1f} ms "
                  f"(median of {a.runs}, interleaved)")
            for k in variants:
                if k != "now":
                    print(f"  {k:<26} {statistics.median(times[k]):7.1f} ms   +{statistics.median(times[k]) - now:5.1f}")


if __name__ == "__main__":
    main()
