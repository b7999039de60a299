"""DRF views for the adapter tests, beside the demo's routes (/api/drf/posts/)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import path
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from appframework.authorization import authorize_sync
from appframework.exceptions import TooManyRequestsException, ValidationException
from testproject.blog.api_drf import PostViewSet
from testproject.blog.models import Post
from testproject.urls import urlpatterns as project_urlpatterns


class AuthorizeInsideView(APIView):
    """The Gate called by hand inside a DRF view that lets everyone in."""

    permission_classes: list[Any] = []

    def post(self, request: Request, id: int) -> Response:
        post = Post.objects.get(pk=id)
        authorize_sync(request, "delete-post", post)
        return Response({"allowed": True})


class SuiteErrors(APIView):
    permission_classes: list[Any] = []

    def get(self, request: Request, kind: str) -> Response:
        if kind == "validation":
            raise ValidationException("title: too long.")
        if kind == "throttled":
            raise TooManyRequestsException(retry_after=2.2)
        if kind == "http404":
            raise Http404("no such thing: internals")
        if kind == "permission":
            raise PermissionDenied
        raise RuntimeError("boom")


class OnePerMinute(UserRateThrottle):
    rate = "1/minute"


class Throttled(APIView):
    throttle_classes = [OnePerMinute]
    abilities = {"GET": None}

    def get(self, request: Request) -> Response:
        return Response({"ok": True})


class Dashboard(APIView):
    """A model-less view: its ability comes from ``abilities``."""

    abilities = {"GET": "see-dashboard"}

    def get(self, request: Request) -> Response:
        token = request.auth
        if token is None:
            return Response({"user": request.user.email, "auth": None})
        lifetime = (token.expires - token.created).total_seconds()
        auth = {"type": type(token).__name__, "key": str(token), "token_id": token.token_id}
        return Response({"user": request.user.email, "auth": auth, "lifetime": lifetime})


class OpenListPosts(PostViewSet):
    abilities = {"list": None}


class NestedSerializer(serializers.Serializer[Any]):
    class Item(serializers.Serializer[Any]):
        name = serializers.CharField()

    title = serializers.CharField()
    items = Item(many=True)

    def validate(self, attrs: Any) -> Any:
        raise serializers.ValidationError("never valid as a whole")


class Nested(APIView):
    abilities = {"POST": None}

    def post(self, request: Request) -> Response:
        NestedSerializer(data=request.data).is_valid(raise_exception=True)
        return Response({})


open_list = OpenListPosts.as_view({"get": "list"})

urlpatterns = [
    path("t/authorize/<int:id>", AuthorizeInsideView.as_view()),
    path("t/errors/<str:kind>", SuiteErrors.as_view()),
    path("t/throttled", Throttled.as_view()),
    path("t/dashboard", Dashboard.as_view()),
    path("t/open-posts", open_list),
    path("t/nested", Nested.as_view()),
    *project_urlpatterns,
]
