"""The "before" project's URLs: Django's auth views and a page behind login_required."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import include, path


@login_required
def private(request):
    return HttpResponse(f"private page of {request.user.get_username()}")


urlpatterns = [
    path("accounts/", include("django.contrib.auth.urls")),
    path("private/", private),
]
