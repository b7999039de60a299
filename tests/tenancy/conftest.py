"""Fixtures of the tenancy tests: two tenants' rows (the demo's full middleware stack,
``demo_stack``, is in tests/conftest.py).

Tests in this folder start with no tenant selected."""

from __future__ import annotations

from typing import Any

import pytest

from appframework_tenancy import as_tenant

A, B = 1, 2


@pytest.fixture
def two_tenants(db: Any) -> dict[str, Any]:
    """One post (with a comment) per tenant: ``a_post``/``b_post``, ``a_comment``/``b_comment``."""
    from tests.tenancy.lab.models import Comment, Post

    rows: dict[str, Any] = {}
    for name, tenant in (("a", A), ("b", B)):
        with as_tenant(tenant):
            post = Post.objects.create(title=f"{name.upper()}-post")
            rows[f"{name}_post"] = post
            rows[f"{name}_comment"] = Comment.objects.create(post=post, body=f"{name}-comment")
    return rows


def row_level_security(aliases: Any) -> Any:
    """``override_settings`` of ``TENANCY["ROW_LEVEL_SECURITY"]`` (the rest kept)."""
    import copy

    from django.conf import settings
    from django.test import override_settings

    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("TENANCY", {})["ROW_LEVEL_SECURITY"] = aliases
    return override_settings(APPFRAMEWORK=app)
