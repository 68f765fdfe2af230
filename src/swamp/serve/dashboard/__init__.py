"""The dashboard (``swamp serve --dashboard``): server-rendered pages under
``/ui/`` over the same use cases, access control and audit log as the
JSON API, with a little plain JavaScript for live runs. The templates and
static files ship inside this package: nothing to build."""
