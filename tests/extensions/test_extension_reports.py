"""A report type shipped in an extension package: found through the
module its `swamp.model_types` entry point names (docs/reports.md)."""

from __future__ import annotations

import pytest

from tests.helpers import cli, init_repo, ok

REPORT = '''

from swamp import Report, ReportType

greeted = ReportType("greeted", scope="method", description="Who was greeted")


@greeted.render
def _render(ctx):
    return Report(markdown=f"greeted by {ctx.model_name}\\n", data={"model": ctx.model_name, "status": ctx.status})
'''


@pytest.mark.slow
def test_an_extension_checkouts_report_type_runs(tmp_path):
    ext = tmp_path / "rep-ext"
    assert cli(None, "extension", "new", "rep-ext", "--path", ext, cwd=tmp_path).code == 0
    model = ext / "src" / "rep_ext" / "model.py"
    model.write_text(model.read_text() + REPORT)
    repo = init_repo(tmp_path / "repo")
    added = cli(repo, "extension", "source", "add", ext)
    assert added.code == 0, added
    found = {r["name"]: r for r in ok(repo, "report", "search", "greet")}
    assert found["greeted"]["scope"] == "method" and found["greeted"]["source"].startswith("source ")
    ok(repo, "model", "create", added.data["types"][0], "dev")
    methods = ok(repo, "model", "type", "describe", added.data["types"][0])["methods"]
    rec = ok(repo, "model", "method", "run", "dev", sorted(methods)[0], "--report", "greeted")
    assert rec["reports"][0]["status"] == "succeeded", rec
    assert ok(repo, "report", "get", "greeted", "--model", "dev")["json"] == {"model": "dev", "status": rec["status"]}
