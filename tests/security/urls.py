"""The demo project's routes plus test-only views under /sec/."""

from __future__ import annotations

from django.urls import path, re_path

from testproject.urls import urlpatterns as project_urlpatterns

from . import views

urlpatterns = [
    path("sec/echo", views.echo),
    path("sec/async-echo", views.async_echo),
    path("sec/exempt", views.exempt_echo),
    path("sec/async-exempt", views.async_exempt_plain),
    re_path(r"^sec/hooks/(?P<rest>.*)$", views.echo),
    re_path(r"^sec/other/(?P<rest>.*)$", views.echo),
    path("sec/token", views.token),
    path("sec/token-only", views.token_only),
    path("sec/async-token-only", views.async_token_only),
    path("sec/plain", views.plain),
    path("sec/async-plain", views.async_plain),
    path("sec/own-headers", views.own_headers),
    *project_urlpatterns,
]
