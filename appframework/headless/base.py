"""What every endpoint of the JSON API shares: the two clients, the JSON body, forms,
errors, and the session's status as the answer of every flow.

``browser``: the session cookie, the suite's CSRF rules (every POST checked, login CSRF
included). ``app``: no cookies; the session travels in ``X-Session-Token``
(:mod:`appframework.headless.middleware`), so no other site can ride on it.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django import forms
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from .. import bounded_json
from ..errors import app_error, form_errors, problem_json_response
from ..exceptions import (
    BadRequestException,
    UnauthorizedException,
    ValidationException,
)
from ..http import set_request_user
from ..security.csrf import csrf_protect_login, csrf_token
from .middleware import is_app_request, use_app_session
from .status import session_status

__all__ = [
    "APP",
    "BROWSER",
    "CLIENTS",
    "HeadlessView",
    "InvalidForm",
    "client_view",
]

BROWSER = "browser"
APP = "app"
CLIENTS = (BROWSER, APP)


class InvalidForm(ValidationException):
    """A form that does not validate: 422 ``invalid`` (or the view's status) with the
    field errors under ``errors``."""

    def __init__(self, form: forms.Form, *, status: int = 422, code: str = "invalid") -> None:
        first = next(iter(form.non_field_errors()), None)
        super().__init__(first or _("The submitted data is not valid."), code=code)
        self.status_code = status
        self.title = HTTPStatus(status).phrase  # type: ignore[assignment]
        self.errors = form_errors(form)


@method_decorator(never_cache, name="dispatch")
class HeadlessView(View):
    """An endpoint of the JSON API; ``client`` is set per URL (``as_view(client=...)``).

    Handlers return a dict (200 JSON) or a response, and raise the suite's errors, which
    are answered as problem+json whatever the client accepts."""

    client = BROWSER
    http_method_names = ["get", "post", "patch", "delete", "options"]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if self.client == APP and not is_app_request(request):
            # An app's first request may come without the header: it gets a new app
            # session, never the browser's cookie session.
            use_app_session(request, None)
            set_request_user(request, AnonymousUser())
        elif self.client == BROWSER and is_app_request(request):
            return problem_json_response(
                BadRequestException(
                    _("This is the browser API; apps use the app API."), code="wrong_client"
                )
            )
        if self.client == BROWSER and request.method == "GET":
            # An app served as static files has no page of ours that set the CSRF
            # cookie: any GET of the browser API hands it out, for the POSTs to come.
            csrf_token(request)
        try:
            result = super().dispatch(request, *args, **kwargs)
        except Exception as exc:
            error = app_error(exc)
            if error is None:
                raise
            return problem_json_response(error, getattr(error, "errors", None))
        if isinstance(result, HttpResponse):
            return result
        return JsonResponse(result)

    # -- input ------------------------------------------------------------------------
    def body(self) -> dict[str, Any]:
        """The JSON object of the request body ({} for none); 400 otherwise."""
        raw = self.request.body
        if not raw.strip():
            return {}
        try:
            data = bounded_json.loads(raw)
        except bounded_json.JsonNestingError:
            raise
        except ValueError:
            raise BadRequestException(
                _("The body is not valid JSON."), code="invalid_json"
            ) from None
        if not isinstance(data, dict):
            raise BadRequestException(_("The body must be a JSON object."), code="invalid_json")
        return data

    def form(
        self,
        form_class: type[forms.Form],
        *,
        status: int = 422,
        code: str = "invalid",
        **kwargs: Any,
    ) -> Any:
        """``form_class`` bound to the body's string fields (objects kept as JSON text,
        as a page's hidden field would hold them), validated; ``InvalidForm`` if not."""
        data = {key: _field_value(value) for key, value in self.body().items()}
        form = form_class(data=data, request=self.request, **kwargs)  # type: ignore[call-arg]
        if not form.is_valid():
            raise InvalidForm(form, status=status, code=code)
        return form

    # -- output -----------------------------------------------------------------------
    def status(self, **extra: Any) -> dict[str, Any]:
        """The session's status (the answer of every flow), plus ``extra``."""
        return {**session_status(self.request), **extra}

    def signed_in_user(self) -> Any:
        from ..auth.sessions import current_user_sync

        user = current_user_sync(self.request)
        if user is None:
            raise UnauthorizedException()
        return user


def _field_value(value: Any) -> Any:
    import json

    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else ""
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value if isinstance(value, str) else str(value)


def client_view(view_class: type[HeadlessView], client: str) -> Any:
    """The view for one client: the browser's is checked for CSRF on every POST, even
    before a session exists (login CSRF); the app's has no cookies to protect."""
    view = view_class.as_view(client=client)
    return csrf_protect_login(view) if client == BROWSER else csrf_exempt(view)
