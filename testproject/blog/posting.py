"""Creating a post: the one set of rules behind the /blog form, ``POST /posts`` and the
GraphQL ``createPost`` mutation."""

from __future__ import annotations

import unicodedata
from typing import Any

from appframework.exceptions import (
    ForbiddenException,
    UnauthorizedException,
    ValidationException,
)

from .models import Post

MAX_TITLE = 200
MAX_BODY = 10_000
#: Line breaks and tabs are the only control characters a body may hold.
_BODY_CONTROLS = {"\n", "\r", "\t"}


def _unsafe(text: str, allowed: set[str]) -> bool:
    """Control (Cc), format (Cf: bidi overrides that reorder a page's line, zero-width
    characters) and lone surrogate (Cs) characters: a NUL the database refuses, a
    surrogate that cannot be stored as UTF-8, an override that makes a title lie about
    where it ends."""
    return any(
        unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in allowed for ch in text
    )


def create_post(user: Any, title: Any, body: Any = "") -> Post:
    """A post by ``user`` in the current tenant (the model stamps it).

    Anonymous → 401; not a member of the current tenant (a new account browsing the
    public one) → 403; a title that is not a non-empty string of at most 200 printable
    characters, or a body over 10,000 characters or with control characters → 422.
    Nothing is written unless all hold.
    """
    if user is None or not getattr(user, "is_authenticated", False):
        raise UnauthorizedException()
    from appframework_tenancy import current_tenant_id

    from .tenancy import member_tenant_ids

    if current_tenant_id() not in member_tenant_ids(user):
        raise ForbiddenException(
            "Only members of this tenant may write in it.", code="tenant_not_member"
        )
    if (
        not isinstance(title, str)
        or not title.strip()
        or len(title) > MAX_TITLE
        or _unsafe(title, set())
    ):
        raise ValidationException(
            f"title: a non-empty string of at most {MAX_TITLE} printable characters."
        )
    body = "" if body is None else body
    if not isinstance(body, str) or len(body) > MAX_BODY or _unsafe(body, _BODY_CONTROLS):
        raise ValidationException(
            f"body: a string of at most {MAX_BODY} characters without control characters."
        )
    return Post.objects.create(title=title.strip(), body=body, author=user)
