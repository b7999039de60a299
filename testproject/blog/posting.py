"""Creating a post: the one set of rules behind the /blog form, ``POST /posts`` and the
GraphQL ``createPost`` mutation."""

from __future__ import annotations

from typing import Any

from appframework.exceptions import UnauthorizedException, ValidationException

from .models import Post

MAX_TITLE = 200


def create_post(user: Any, title: Any, body: Any = "") -> Post:
    """A post by ``user`` in the current tenant (the model stamps it).

    Anonymous → 401; a title that is not a non-empty string of at most 200 characters →
    422. Nothing is written unless both hold.
    """
    if user is None or not getattr(user, "is_authenticated", False):
        raise UnauthorizedException()
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
        raise ValidationException(
            f"title: a non-empty string of at most {MAX_TITLE} characters."
        )
    return Post.objects.create(title=title.strip(), body=str(body or ""), author=user)
