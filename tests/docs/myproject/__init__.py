"""A stand-in for the reader's own project in the docs' samples (``myproject.schema.
schema``, ``myproject.tenancy.resolve_tenant``, ``from myproject.models import Post``):
the demo's pieces under the names the docs use. tests/docs/conftest.py makes it
importable as the top-level package ``myproject``."""
