"""``swamp serve``: an HTTP JSON API over the application layer.

Each request authenticates, checks its arguments, asks the grants, then runs
one ``swamp.app`` use case in a worker thread (the application layer is
synchronous) and renders its result as the command line's ``--json`` would,
or its error as the same ``{"error", "code", "hint"}`` document with an HTTP
status. A read pulls first, exactly like the command line, so a replica
never serves data older than what a peer committed before the request came.

The HTTP machinery (starlette, uvicorn) is in ``app.py`` (the endpoints),
``state.py`` (what a running server holds), ``request_checks.py``, the
dashboard and ``runner.py``; ``process.py`` is the one module the CLI's
``swamp serve`` imports, the process it becomes. Tokens, grants and groups
are the domain's (swamp/access/) and their use cases app's
(app/access_admin.py, app/access_tokens.py, app/enforced_access.py), shared
with the ``swamp access`` commands; serve keeps the HTTP: a request's
credential, its routes, the audit log."""
