"""The demo project's routes plus test-only views under /authz/."""

from __future__ import annotations

from django.urls import path

from testproject.urls import urlpatterns as project_urlpatterns

from . import views

urlpatterns = [
    path("authz/sync/posts/<int:id>", views.sync_edit),
    path("authz/async/posts/<int:id>", views.async_edit),
    path("authz/named/posts/<int:post_id>", views.sync_edit_named),
    path("authz/authorize-sync/posts/<int:id>", views.sync_authorize),
    path("authz/authorize-async/posts/<int:id>", views.async_authorize),
    *project_urlpatterns,
]
