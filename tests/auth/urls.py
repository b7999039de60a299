"""URLconf for the auth tests: the demo project's routes plus test-only views."""

from django.urls import include, path

from . import views

urlpatterns = [
    path("t/whoami", views.whoami_sync),
    path("t/awhoami", views.whoami_async),
    path("t/require", views.require_sync),
    path("t/arequire", views.require_async),
    path("t/session-touch", views.session_touch),
    path("t/login", views.login_sync),
    path("t/logout", views.logout_sync),
    path("t/alogin", views.login_async),
    path("t/alogout", views.logout_async),
    path("t/login-required", views.django_login_required),
    path("t/api/whoami", views.api_whoami_sync),
    path("t/api/awhoami", views.api_whoami_async),
    path("t/api/require", views.api_require_sync),
    path("t/api/arequire", views.api_require_async),
    path("t/deco/session", views.decorated_session_sync),
    path("t/deco/asession", views.decorated_session_async),
    path("t/deco/api", views.decorated_api_sync),
    path("t/deco/aapi", views.decorated_api_async),
    path("t/raise/<str:kind>", views.raise_error),
    path("t/araise/<str:kind>", views.raise_error_async),
    path("", include("testproject.urls")),
]
