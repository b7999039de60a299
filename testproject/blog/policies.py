"""The demo's authorization rules, registered from BlogConfig.ready()."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from appframework.authorization import Gate

#: Roles whose holders may delete any post, not only their own.
DELETE_ANY = ("editor", "admin")


def _deletes_any(user: Any) -> bool:
    return any(user.has_role(role) for role in DELETE_ANY)


class PostPolicy:
    """Authors manage their own posts; editors and admins may delete any post."""

    def before(self, user: Any, ability: str) -> bool | None:
        # Deactivated accounts can do nothing, whatever the ability.
        return False if not getattr(user, "is_active", False) else None

    def view_post(self, user: Any, post: Any = None) -> bool:
        # Any signed-in user reads the current tenant's posts (the scoped manager and
        # the tenant guard keep other tenants' out).
        return bool(user.is_authenticated)

    def update_post(self, user: Any, post: Any) -> bool:
        return bool(post.author_id == user.pk)

    def delete_post(self, user: Any, post: Any) -> bool:
        return bool(post.author_id == user.pk or _deletes_any(user))

    def scope_delete_post(self, user: Any, posts: QuerySet[Any]) -> QuerySet[Any]:
        if _deletes_any(user):
            return posts
        return posts.filter(author_id=user.pk)

    def create_post(self, user: Any, post: Any = None) -> bool:
        # Asked with the class (Post) or with the unsaved post itself.
        return bool(user.is_authenticated)


def register(gate: Gate) -> None:
    from .models import Post

    gate.policy(Post, PostPolicy)
    # A role-based ability: anyone with the "moderator" role or the "posts.publish"
    # permission (granted through any role).
    gate.define(
        "publish-post",
        lambda user, post=None: (
            Gate.role("moderator")(user) or Gate.permission("posts.publish")(user)
        ),
    )
    # The tenant's webhook endpoints (/api/drf/webhook-endpoints/): every member of the
    # tenant sees them and their delivery log; admins, or a role granting
    # "webhooks.manage", create, change, rotate, recover and delete them.
    gate.define("view-webhooks", lambda user, endpoint=None: bool(user.is_authenticated))
    gate.define(
        "manage-webhooks",
        lambda user, endpoint=None: (
            Gate.role("admin")(user) or Gate.permission("webhooks.manage")(user)
        ),
    )
    # Someone else's email address: admins, or any role granting "users.view-email".
    # (Everyone may see their own; the schema checks that before asking the Gate.)
    gate.define(
        "view-email",
        lambda user, subject=None: (
            Gate.role("admin")(user) or Gate.permission("users.view-email")(user)
        ),
    )
