"""Fixtures and helpers of the django-ninja adapter tests."""

from __future__ import annotations

from typing import Any

import pytest

from appframework.auth import TokenManager
from tests.conftest import demo_tenant

PROBLEM = "application/problem+json"
JSON = {"HTTP_ACCEPT": "application/json"}


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    """The problem document of ``response``, after checking it is one: the status, the
    media type and the members every error of the suite carries."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith(PROBLEM), (
        response["Content-Type"],
        response.content,
    )
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["code"] == code, body
    assert {"type", "title", "detail"} <= set(body), body
    return body


def bearer(user: Any) -> dict[str, str]:
    """Request headers with a fresh suite token of ``user``."""
    return {"HTTP_AUTHORIZATION": f"Bearer {TokenManager().issue(user)}", **JSON}


def make_editor(email: str = "ed@example.com") -> Any:
    """A user holding the demo's ``editor`` role (may delete any post)."""
    from appframework.authorization import Role
    from testproject.blog.models import User

    editor = User.objects.create_user(email, "editor-password-long")
    editor.roles.add(Role.objects.get_or_create(name="editor")[0])
    return editor


@pytest.fixture
def member(user: Any) -> Any:
    """``user``, a member of the tenant the tests run as (Acme)."""
    user.tenants.add(demo_tenant())
    return user
