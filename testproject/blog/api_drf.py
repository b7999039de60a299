"""/api/drf/posts/: the demo's posts as a Django REST framework API, guarded by the
suite's classes (settings.REST_FRAMEWORK). Browsable from a signed-in browser
(session + CSRF), scriptable with a bearer token from /account/token."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from .models import Post
from .posting import MAX_TITLE, create_post, update_post


class PostSerializer(serializers.ModelSerializer[Post]):
    title = serializers.CharField(max_length=MAX_TITLE)

    class Meta:
        model = Post
        fields = ["id", "title", "body", "author_id", "tenant_id", "created_at"]
        read_only_fields = ["id", "author_id", "tenant_id", "created_at"]


class PostViewSet(viewsets.ModelViewSet[Post]):
    """The current tenant's posts. Listing and reading need a signed-in user; creating
    needs membership of the tenant; only the author edits; authors, editors and admins
    delete; moderators publish. Another tenant's post is not found."""

    # GatePermission asks the Gate for view-post, create-post, update-post, delete-post
    # and, for the publish action, publish-post. The queryset is the tenant-scoped
    # manager, so another tenant's id is a 404 before the Gate is asked.
    queryset = Post.objects.select_related("author")
    serializer_class = PostSerializer
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "demo-posts"

    def perform_create(self, serializer: Any) -> None:
        # The one set of rules behind every way of writing a post (tenant membership,
        # printable titles): the same function as the /blog form and GraphQL.
        data = serializer.validated_data
        serializer.instance = create_post(self.request.user, data["title"], data.get("body", ""))

    def perform_update(self, serializer: Any) -> None:
        # PUT and PATCH keep the rules of POST: the same cleaning, the same limits.
        serializer.instance = update_post(serializer.instance, **serializer.validated_data)

    @action(detail=True, methods=["post"])
    def publish(self, request: Request, pk: Any = None) -> Response:
        post = self.get_object()
        return Response({"published": post.pk})
