"""A URL no pattern matches, and the URLconf's ``handler404`` (DEBUG off).

``ErrorMiddleware`` answers such a 404 in the suite's one format (problem+json, or the
small HTML page for a browser) only when the URLconf's ``handler404`` is Django's default
or ``appframework.views.page_not_found``; a project's own ``handler404`` page is kept as
the project wrote it. ``request.urlconf`` (set by a middleware) is the URLconf that
counts, as it is for Django.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpResponse
from django.urls import get_resolver
from django.views import defaults

from appframework import views as suite_views
from appframework.http import PROBLEM_JSON

from .own_handler404_urls import OWN_404_MARKER, own_page_not_found
from .test_error_format import ALL_ACCEPTS, FLAVORS, NOT_FOUND, assert_answer, fetch

OWN = "tests.core.own_handler404_urls"
DEFAULT = "tests.core.default_handler404_urls"
SUITE = "tests.core.error_urls"  # handler404 = "appframework.views.page_not_found"
NO_ROUTE = "/no/such/page"
DJANGO_DEFAULT_TEXT = "The requested resource was not found on this server."


@pytest.fixture(autouse=True)
def _debug_off(settings: Any) -> None:
    settings.DEBUG = False


@pytest.fixture
def urlconf_from_header(settings: Any) -> None:
    """The test middleware that sets ``request.urlconf`` from ``X-Urlconf``, first."""
    settings.MIDDLEWARE = [f"{OWN}.urlconf_from_header", *settings.MIDDLEWARE]


def assert_own_page(response: HttpResponse) -> None:
    assert response.status_code == 404
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert OWN_404_MARKER in response.content.decode()


def test_the_urlconfs_name_the_handlers_they_stand_for() -> None:
    assert get_resolver(OWN).resolve_error_handler(404) is own_page_not_found
    assert get_resolver(DEFAULT).resolve_error_handler(404) is defaults.page_not_found
    assert get_resolver(SUITE).resolve_error_handler(404) is suite_views.page_not_found


@pytest.mark.urls(OWN)
@pytest.mark.parametrize("accept_name", ALL_ACCEPTS)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_no_route_404_keeps_the_projects_own_handler404_page(flavor: str, accept_name: str) -> None:
    response = fetch(flavor, NO_ROUTE, ALL_ACCEPTS[accept_name])

    assert_own_page(response)
    assert response["Content-Type"] != PROBLEM_JSON


@pytest.mark.urls(OWN)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_matched_routes_still_answer_under_a_project_handler404(flavor: str) -> None:
    response = fetch(flavor, "/h/ok", "application/json")
    assert response.status_code == 200
    assert response.json() == {"ok": True}


@pytest.mark.parametrize("urlconf", [DEFAULT, SUITE], ids=["django-default", "suite"])
@pytest.mark.parametrize("accept_name", ALL_ACCEPTS)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_no_route_404_is_replaced_by_the_suites_format_for_the_default_and_suite_handler404(
    settings: Any, urlconf: str, flavor: str, accept_name: str
) -> None:
    settings.ROOT_URLCONF = urlconf

    response = fetch(flavor, NO_ROUTE, ALL_ACCEPTS[accept_name])

    assert_answer(response, NOT_FOUND, accept_name)
    assert DJANGO_DEFAULT_TEXT not in response.content.decode()
    assert OWN_404_MARKER not in response.content.decode()


@pytest.mark.urls(DEFAULT)
@pytest.mark.usefixtures("urlconf_from_header")
@pytest.mark.parametrize("accept_name", ALL_ACCEPTS)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_request_urlconf_with_its_own_handler404_keeps_that_page(
    flavor: str, accept_name: str
) -> None:
    response = fetch(flavor, NO_ROUTE, ALL_ACCEPTS[accept_name], headers={"X-Urlconf": OWN})

    assert_own_page(response)


@pytest.mark.urls(OWN)
@pytest.mark.usefixtures("urlconf_from_header")
@pytest.mark.parametrize("accept_name", ALL_ACCEPTS)
@pytest.mark.parametrize("flavor", FLAVORS)
def test_request_urlconf_with_the_default_handler404_gets_the_suites_format(
    flavor: str, accept_name: str
) -> None:
    response = fetch(flavor, NO_ROUTE, ALL_ACCEPTS[accept_name], headers={"X-Urlconf": DEFAULT})

    assert_answer(response, NOT_FOUND, accept_name)
    assert OWN_404_MARKER not in response.content.decode()
