"""``path("", include("appframework_graphql.urls"))`` serves the endpoint at
``APPFRAMEWORK["GRAPHQL"]["PATH"]`` (default ``/graphql``)."""

from __future__ import annotations

from django.urls import path

from appframework.conf import app_settings

from .views import configured_view

app_name = "appframework_graphql"

urlpatterns = [
    path(str(app_settings.GRAPHQL.PATH).lstrip("/"), configured_view(), name="graphql"),
]
