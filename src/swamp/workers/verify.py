"""`swamp worker verify`: each connected swamp worker answers a probe, run
on it through the scheduler over the team's mutual TLS: its swamp and
Dask versions, the team certificate it presents, its labels, and whether
its shared datastore answers (a pull). A worker that does not answer within
the timeout, or whose datastore does not, fails the check."""

from __future__ import annotations

import threading
import time

from swamp.errors import NotFoundError
from swamp.workers import placement as labels_mod

#: seconds each worker has to answer
PROBE_TIMEOUT = 30.0


def verify(scheduler: str, *, link=None, name: str | None = None, labels: dict | None = None,
           timeout: float = PROBE_TIMEOUT) -> list[dict]:
    """One row per swamp worker (of ``name``, with every label of
    ``labels``), by name: ``ok``, what it answered, or why it failed."""
    import swamp
    from swamp.workers.dispatch import connect

    client = connect(scheduler, link=link, insecure_flag="--insecure")
    try:
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
        chosen = {addr: w for addr, w in workers.items() if labels_mod.fits(w, labels or {}, name)}
        if not chosen:
            what = "".join([f" named {name}" if name else "",
                            *(f" with {k}={v}" for k, v in sorted((labels or {}).items()))])
            raise NotFoundError(f"no swamp worker{what} is connected to {scheduler}",
                                hint="'swamp worker list' shows who is connected")
        answers = _ask(client, list(chosen), timeout)
    finally:
        client.close()
    rows = []
    for addr, w in chosen.items():
        answer = answers.get(addr)
        row = {"name": str(w.get("name")), "address": addr, "labels": labels_mod.labels_of(w.get("resources")),
               "ok": False, "version": None, "sameVersion": None, "dask": None, "certificate": None,
               "datastore": None, "error": None}
        if isinstance(answer, dict):
            row.update({k: answer.get(k) for k in ("version", "dask", "certificate", "datastore")})
            row["sameVersion"] = answer.get("version") == swamp.__version__
            row["error"] = answer.get("error")
            row["ok"] = row["error"] is None
        else:
            row["error"] = answer or f"no answer within {timeout:g} s"
        rows.append(row)
    return sorted(rows, key=lambda r: (r["name"], r["address"]))


def _ask(client, addresses: list[str], timeout: float) -> dict:
    """Each worker's answer (a dict) or the error text, asked at once."""
    answers: dict = {}

    def one(addr: str) -> None:
        try:
            answers[addr] = client.run(_probe, workers=[addr], on_error="return").get(addr)
            if isinstance(answers[addr], BaseException):
                answers[addr] = f"{type(answers[addr]).__name__}: {answers[addr]}"
        except Exception as e:  # noqa: BLE001 - reported as that worker's failure
            answers[addr] = f"{type(e).__name__}: {e}"

    threads = [threading.Thread(target=one, args=(a,), daemon=True) for a in addresses]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return dict(answers)


def _probe(dask_worker=None) -> dict:
    """On the worker: what it is, and whether its datastore answers."""
    import distributed

    import swamp
    from swamp.workers import task

    out = {"version": swamp.__version__, "dask": distributed.__version__, "certificate": None,
           "datastore": None, "error": None}
    security = getattr(dask_worker, "security", None)
    cert = getattr(security, "tls_worker_cert", None) if security is not None else None
    if cert:
        from cryptography import x509
        from cryptography.x509.oid import NameOID

        with open(cert, "rb") as f:
            subject = x509.load_pem_x509_certificate(f.read()).subject
        names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        out["certificate"] = str(names[0].value) if names else None
    repo = task._state.get("repo")
    if repo is None:
        out["error"] = "not a swamp worker (no repository)"
        return out
    try:
        from swamp.app.lifecycle import reading

        with reading(repo):  # one pull, as a step's session starts: the worker reaches its shared datastore
            pass
        out["datastore"] = f"{repo.datastore.kind}: ok"
    except Exception as e:  # noqa: BLE001 - the check's finding
        out["datastore"] = f"{repo.datastore.kind}: {e}"
        out["error"] = f"its shared datastore does not answer: {e}"
    return out
