"""A strict ``Content-Security-Policy`` for the suite's own pages (``SECURITY_HEADERS.PAGE_CSP``):
they carry no inline script or style, so the policy allows neither. A policy of the
project's own — ``SECURITY_HEADERS.CSP``, Django's ``SECURE_CSP``, or a header the view
set — wins: the suite's is only the default for pages that would have none."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from ..conf import DEFAULTS, app_settings

__all__ = ["DEFAULT_PAGE_CSP", "apply_page_csp", "page_csp"]

DEFAULT_PAGE_CSP: str = DEFAULTS["SECURITY_HEADERS"]["PAGE_CSP"]

_HEADER = "Content-Security-Policy"
View = TypeVar("View", bound=Callable[..., Any])


def _project_has_policy() -> bool:
    # Both are added on the way out by a middleware, after the view: the view cannot see
    # their header yet, so it steps aside as soon as one is configured.
    return bool(app_settings.SECURITY_HEADERS.CSP) or bool(getattr(settings, "SECURE_CSP", None))


def apply_page_csp(response: Any) -> Any:
    """Give ``response`` the suite's page policy unless it has one, or the project does."""
    policy = app_settings.SECURITY_HEADERS.PAGE_CSP
    if (
        policy
        and isinstance(response, HttpResponse)
        and _HEADER not in response.headers
        and not _project_has_policy()
    ):
        response.headers[_HEADER] = str(policy)
    return response


def page_csp(view: View) -> View:
    """Decorator for a page view (function, or ``as_view()``) of the suite's pages."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        return apply_page_csp(view(request, *args, **kwargs))

    return wrapper  # type: ignore[return-value]
