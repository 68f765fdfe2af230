from __future__ import annotations

import textwrap

import pytest

from tests.helpers import cli, init_repo
from tests.helpers import ok, s3_setup_args
from tests.workers.cluster import Cluster, start_scheduler, team

SECRET = "s3cr3t-W0rker-Value-91"

MODELS = {
    "hello": """
        type: command/shell
        name: hello
        globalArguments:
          run: echo hello
    """,
    "slow": """
        type: command/shell
        name: slow
        globalArguments:
          run: sleep 20
    """,
    # The secret reaches the command through its environment; the command
    # prints its digest, so the test can tell the right value arrived.
    "secretive": """
        type: command/shell
        name: secretive
        globalArguments:
          run: 'printf %s "$TOKEN" | sha256sum | cut -c1-64'
          env:
            TOKEN: "${{ vault.get('main', 'token') }}"
    """,
}

WORKFLOWS = {
    "spread": """
        name: spread
        jobs:
          - name: j
            steps:
              - name: "say-${{ self.s.r }}-${{ self.s.n }}"
                forEach:
                  item: s
                  in: "${{ [{'r': 'eu', 'n': 1}, {'r': 'us', 'n': 1}, {'r': 'eu', 'n': 2}, {'r': 'us', 'n': 2}] }}"
                placement:
                  labels: {region: "${{ self.s.r }}"}
                  queueTimeout: 20
                task:
                  type: model_method
                  modelIdOrName: hello
                  methodName: execute
                  inputs: {run: "echo ${{ self.s.r }}-${{ self.s.n }}"}
    """,
    "doomed": """
        name: doomed
        jobs:
          - name: j
            steps:
              - name: slow
                placement: {labels: {region: doomed}, queueTimeout: 20}
                task: {type: model_method, modelIdOrName: slow, methodName: execute}
    """,
    "nowhere": """
        name: nowhere
        jobs:
          - name: j
            steps:
              - name: lost
                placement: {labels: {region: mars}, queueTimeout: 2}
                task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """,
    "secret": """
        name: secret
        jobs:
          - name: j
            steps:
              - name: use
                placement: {target: us-1}
                task: {type: model_method, modelIdOrName: secretive, methodName: execute}
    """,
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, seaweedfs):
    root = tmp_path_factory.mktemp("workers")
    origin = init_repo(root / "origin")
    for name, body in MODELS.items():
        path = origin / "models" / "command" / "shell" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body).lstrip())
    (origin / "workflows").mkdir(exist_ok=True)
    for name, body in WORKFLOWS.items():
        (origin / "workflows" / f"workflow-{name}.yaml").write_text(textwrap.dedent(body).lstrip())
    assert cli(origin, "vault", "create", "local_encryption", "main").code == 0
    assert cli(origin, "vault", "put", "main", "token", input=SECRET).code == 0
    setup = s3_setup_args(seaweedfs)
    ok(origin, "datastore", "setup", *setup)
    certs = team(root / "certs")
    scheduler, procs, log = start_scheduler(root, certs)
    c = Cluster(scheduler, origin, setup, root, log, certs, procs=list(procs))
    try:
        c.start_worker("eu-1", "region=eu")
        c.start_worker("us-1", "region=us")
        yield c
    finally:
        c.stop()
