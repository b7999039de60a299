from django.contrib import admin
from django.urls import include, path

from . import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),  # the project's, kept
    path("account/", include("appframework.auth.urls")),  # adopting: optional, TOTP pages
    path("", views.home, name="home"),
    path("private/", views.private, name="private"),
    path("notes/", views.notes, name="notes"),
    path("api/notes/", views.api_notes, name="api-notes"),
]
