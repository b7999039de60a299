"""The demo's GraphQL schema (plain graphql-core): posts, the current user, and a
mutation guarded by the Gate.

Two habits worth copying: every list has a hard maximum size, whatever the client asks
for, and personal data (a user's email) is resolved through an authorization check
rather than exposed to whoever can reach the endpoint.
"""

from __future__ import annotations

import re
from typing import Any

from graphql import GraphQLResolveInfo, build_schema

from appframework.auth import current_api_user_sync, current_user_sync
from appframework.authorization import Gate, authorize_sync
from appframework.container import container
from appframework.exceptions import NotFoundException

from .models import Post, User
from .posting import create_post

#: The most posts one ``posts`` field returns, whatever ``limit`` asks for.
MAX_POSTS = 100

SDL = """
type User {
  id: ID!
  "Null unless you are this user or may view emails (the view-email ability)."
  email: String
  name: String
}

type Post {
  id: ID!
  title: String!
  body: String
  author: User
}

type Query {
  hello(name: String): String!
  "The newest posts: at most 100, whatever limit asks for."
  posts(limit: Int = 20): [Post!]!
  post(id: ID!): Post
  me: User
}

type Mutation {
  "A post in the current tenant, by the signed-in user."
  createPost(title: String!, body: String): Post!
  deletePost(id: ID!): Boolean!
}
"""

schema = build_schema(SDL)


def _request(info: GraphQLResolveInfo) -> Any:
    return info.context["request"]


def _viewer(info: GraphQLResolveInfo) -> Any:
    """The user making the request (session, else bearer token), or None."""
    request = _request(info)
    if request is None:
        return None
    return current_user_sync(request) or current_api_user_sync(request)


def resolve_hello(_: Any, info: GraphQLResolveInfo, name: str | None = None) -> str:
    return f"Hello, {name or 'world'}!"


#: An id as this schema hands them out: ASCII digits (``str.isdigit`` would also take
#: Arabic-Indic and superscript digits), short enough for a bigint.
_ID = re.compile(r"[0-9]{1,18}")


def _post_id(value: str) -> int | None:
    """The post id ``value`` names, or None for anything else."""
    return int(value) if _ID.fullmatch(value) else None


def resolve_posts(_: Any, info: GraphQLResolveInfo, limit: int | None = 20) -> list[Post]:
    # ``posts(limit: null)`` is valid GraphQL (the argument is nullable): the default.
    size = 20 if limit is None else max(0, min(limit, MAX_POSTS))
    return list(Post.objects.select_related("author")[:size])


def resolve_post(_: Any, info: GraphQLResolveInfo, id: str) -> Post | None:
    pk = _post_id(id)
    return None if pk is None else Post.objects.select_related("author").filter(pk=pk).first()


def resolve_me(_: Any, info: GraphQLResolveInfo) -> Any:
    return _viewer(info)


def resolve_user_email(user: User, info: GraphQLResolveInfo) -> str | None:
    viewer = _viewer(info)
    if viewer is None:
        # Anonymous readers see the posts but not who to email: null, not an error, so
        # a public page listing authors still renders.
        return None
    if viewer.pk == user.pk:
        return user.email
    gate: Gate = container.resolve(Gate)
    return user.email if gate.allows_sync(viewer, "view-email", user) else None


def resolve_create_post(
    _: Any, info: GraphQLResolveInfo, title: str, body: str | None = None
) -> Post:
    # The same rules as the /blog form and POST /posts (testproject/blog/posting.py).
    return create_post(_viewer(info), title, body or "")


def resolve_delete_post(_: Any, info: GraphQLResolveInfo, id: str) -> bool:
    pk = _post_id(id)
    post = None if pk is None else Post.objects.filter(pk=pk).first()
    if post is None:
        # extensions.code "not_found": a client's mistake, told apart from a failure.
        raise NotFoundException(f"No post with id {id}.", code="not_found")
    # Raises UnauthorizedException / ForbiddenException: reported with their message and
    # extensions.status 401/403.
    authorize_sync(_request(info), "delete-post", post)
    post.delete()
    return True


_query = schema.query_type
assert _query is not None
_query.fields["hello"].resolve = resolve_hello
_query.fields["posts"].resolve = resolve_posts
_query.fields["post"].resolve = resolve_post
_query.fields["me"].resolve = resolve_me
_user = schema.type_map["User"]
_user.fields["email"].resolve = resolve_user_email  # type: ignore[union-attr]
_mutation = schema.mutation_type
assert _mutation is not None
_mutation.fields["createPost"].resolve = resolve_create_post
_mutation.fields["deletePost"].resolve = resolve_delete_post
