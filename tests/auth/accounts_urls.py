"""The library's account pages as a project mounts them (docs/accounts.md), its admin
site, and a ``@login_required`` page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from appframework.admin import AdminSite


@login_required
def private(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"private page of {request.user.get_username()}")


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse("home")


admin_site = AdminSite(name="admin")

urlpatterns = [
    path("", home),
    path("accounts/", include("appframework.auth.urls")),
    path("admin/", admin_site.urls),
    path("private/", private),
]
