"""The OpenAPI 3.1 document, built from the route table."""

from __future__ import annotations

from swamp.serve.errors import STATUS
from swamp.serve.routes import ROUTES

_TYPES = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "array"}

_ERROR = {"type": "object", "required": ["error", "code"], "properties": {
    "error": {"type": "string"}, "code": {"type": "string"}, "hint": {"type": "string"},
    "value": {"description": "with code 'unpublished' only: the result, with published: false"},
    "errors": {"type": "array", "description": "a document's schema errors, each {path, message}, sorted by path",
               "items": {"type": "object", "properties": {"path": {"type": "string"}, "message": {"type": "string"}}}}}}


def _operation(route) -> dict:
    params = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
              for name in _path_params(route.path)]
    params += [{"name": name, "in": "query", "required": False, "description": desc,
                "schema": {"type": _TYPES[kind]}} for name, (kind, desc) in route.query.items()]
    op: dict = {"operationId": route.op, "summary": route.summary, "parameters": params, "responses": {
        "200": {"description": "the result, as the command line's --json prints it",
                "content": {"application/json": {}}},
        **{str(status): {"$ref": "#/components/responses/Error"} for status in
           sorted({400, 401, 403, 404, 409, 413, 429, 500, 503})},
    }}
    if route.changes:
        op["responses"]["202"] = {"description": "done, but not yet published to the shared datastore",
                                  "content": {"application/json": {"schema": _ERROR}}}
    if route.action:
        op["x-swamp-access"] = {"action": route.action}
    if route.body is not None:
        required = [n for n, (_, req, _) in route.body.fields.items() if req]
        schema = {"type": "object", "additionalProperties": False, "properties": {
            n: {"type": _TYPES[k], "description": d} for n, (k, _, d) in route.body.fields.items()}}
        if required:
            schema["required"] = required
        op["requestBody"] = {"required": bool(required), "content": {"application/json": {"schema": schema}}}
    if route.stream:
        op["responses"]["200"]["content"]["text/event-stream"] = {
            "description": "with Accept: text/event-stream: events 'accepted' (at once), 'log' and 'step' "
                           "while it runs, then 'result' or 'error' ({status, body})"}
    return op


def _path_params(path: str) -> list[str]:
    import re

    return re.findall(r"{(\w+)}", path)


def document() -> dict:
    from importlib.metadata import version

    paths: dict = {
        "/health": {"get": {"operationId": "health", "summary": "Liveness, version, auth mode, runs in flight, "
                            "which replica answered (a random id per process)",
                            "responses": {"200": {"description": "ok"}}}},
        "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document",
                                  "responses": {"200": {"description": "ok"}}}},
        "/hooks/{name}": {"post": {
            "operationId": "webhook", "summary": "Start the webhook's workflow (body: its inputs), in the background",
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                           {"name": "X-Swamp-Signature-256", "in": "header", "required": True,
                            "description": "sha256=<hex HMAC-SHA256 of the body with the shared secret>",
                            "schema": {"type": "string"}}],
            "security": [],
            "responses": {"202": {"description": "accepted; the run is in the workflow's history"},
                          "401": {"$ref": "#/components/responses/Error"},
                          "404": {"$ref": "#/components/responses/Error"}}}},
    }
    paths["/api/v1/whoami"] = {"get": {
        "operationId": "whoami", "summary": "Who the caller's token acts as (any valid token)",
        "responses": {"200": {"description": "{actor, subjects, authMode}"},
                      "401": {"$ref": "#/components/responses/Error"}}}}
    paths["/api/v1/serve/reload"] = {"post": {
        "operationId": "reloadServe", "summary": "Pull, read access again, install what the lockfile pins",
        "x-swamp-access": {"action": "admin", "resource": "serve:reload"},
        "responses": {"200": {"description": "{access, extensions, trustedIndexes}"},
                      "403": {"$ref": "#/components/responses/Error"}}}}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "swamp serve", "version": version("swamp"),
                 "description": "The application layer of swamp over HTTP. Errors are "
                                "{error, code, hint}; statuses by code: "
                                + ", ".join(f"{c} {s}" for c, s in sorted(STATUS.items()))},
        "paths": paths,
        "components": {
            "responses": {"Error": {"description": "an error document",
                                    "content": {"application/json": {"schema": _ERROR}}}},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "NAME.SECRET from 'swamp access token mint'"}},
        },
        "security": [{"bearer": []}, {}],
    }
