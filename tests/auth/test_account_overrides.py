"""What a project overrides, as docs/accounts.md will say: a form class through
``AUTH["FORMS"]``, the adapter through ``AUTH["ADAPTER"]``, a page's or a mail's
template by giving one of the same name."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from django import forms
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.test import override_settings

from appframework.auth.adapter import AccountAdapter
from appframework.auth.forms import SignupForm, form_class
from testproject.blog.models import User

from .account_pages import HTML, URLCONF, browser, post, signed_in
from .flows import GOOD_PASSWORD, LOGIN, SIGNUP, configure, sign_up

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]
__all__ = ["configure"]  # fixtures

NEW = "newcomer@example.com"


class TermsSignupForm(SignupForm):
    """A project's sign-up form: the suite's, plus a box to tick."""

    terms = forms.BooleanField(label="I accept the terms", required=True)


class ProjectAdapter(AccountAdapter):
    def get_login_redirect_url(self, request: HttpRequest) -> str:
        return "/dashboard/"

    def populate_user(self, request: HttpRequest | None, user: Any, data: Mapping[str, Any]) -> Any:
        user = super().populate_user(request, user, data)
        user.name = str(data["email"]).split("@")[0].title()
        return user


class ClosedAdapter(AccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return False


# -- forms ----------------------------------------------------------------------------
def test_a_project_signup_form_is_the_one_the_page_uses(
    configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="none", FORMS={"signup": f"{__name__}.TermsSignupForm"})
    client = browser()
    page = client.get(SIGNUP).content.decode()
    assert 'type="checkbox" name="terms"' in page
    assert "I accept the terms" in page
    refused = post(client, SIGNUP, {"email": NEW, "password": GOOD_PASSWORD})
    assert refused.status_code == 422
    assert 'id="id_terms_error"' in refused.content.decode()
    assert not User.objects.filter(email=NEW).exists()
    response = post(client, SIGNUP, {"email": NEW, "password": GOOD_PASSWORD, "terms": "on"})
    assert response.status_code == 302
    assert signed_in(client)
    assert User.objects.filter(email=NEW).exists()


def test_a_form_setting_that_is_no_form_class_is_an_improperly_configured_error(
    configure: Callable[..., None],
) -> None:
    configure(FORMS={"signup": f"{__name__}.ProjectAdapter"})
    with pytest.raises(ImproperlyConfigured, match="signup"):
        form_class("signup", SignupForm)


# -- the adapter ------------------------------------------------------------------------
def test_the_adapters_login_redirect_is_where_a_sign_in_lands(
    configure: Callable[..., None], user: Any, password: str
) -> None:
    configure(ADAPTER=f"{__name__}.ProjectAdapter", EMAIL_VERIFICATION="optional")
    client = browser()
    client.get(LOGIN)
    response = post(client, LOGIN, {"email": user.email, "password": password})
    assert response["Location"] == "/dashboard/"
    # A same-site next still wins.
    other = browser()
    other.get(LOGIN)
    response = post(other, LOGIN, {"email": user.email, "password": password, "next": "/private/"})
    assert response["Location"] == "/private/"


def test_the_adapters_redirect_and_populate_user_shape_a_signup(
    configure: Callable[..., None],
) -> None:
    configure(ADAPTER=f"{__name__}.ProjectAdapter", EMAIL_VERIFICATION="none")
    response = sign_up(browser(), NEW)
    assert response["Location"] == "/dashboard/"
    assert User.objects.get(email=NEW).name == "Newcomer"


@pytest.mark.parametrize("how", ["adapter", "setting"])
def test_closed_signup_is_a_403_page_and_a_403_signup_closed_post(
    configure: Callable[..., None], mailoutbox: list[Any], how: str
) -> None:
    if how == "adapter":
        configure(ADAPTER=f"{__name__}.ClosedAdapter")
    else:
        configure(SIGNUP=False)
    client = browser()
    page = client.get(SIGNUP)
    assert page.status_code == 403
    assert "Sign-up is closed" in page.content.decode()
    assert 'name="password"' not in page.content.decode()
    data = {"email": NEW, "password": GOOD_PASSWORD}
    assert post(client, SIGNUP, data).status_code == 403
    api = post(client, SIGNUP, data, HTTP_ACCEPT="application/json")
    assert api.status_code == 403
    assert api.json()["code"] == "signup_closed"
    assert not User.objects.filter(email=NEW).exists()
    assert mailoutbox == []
    # The login page no longer offers it.
    assert f'href="{SIGNUP}"' not in client.get(LOGIN).content.decode()


def test_an_open_signup_is_offered_on_the_login_page(configure: Callable[..., None]) -> None:
    configure(SIGNUP=True)
    assert f'href="{SIGNUP}"' in browser().get(LOGIN).content.decode()


def test_a_closed_signup_post_still_needs_the_csrf_token(configure: Callable[..., None]) -> None:
    configure(SIGNUP=False)
    client = browser()
    response = client.post(SIGNUP, {"email": NEW, "password": GOOD_PASSWORD}, **HTML)
    assert response.status_code == 403
    assert "signup_closed" not in response.content.decode()


# -- templates --------------------------------------------------------------------------
@pytest.fixture
def project_templates(tmp_path: Path) -> Iterator[Path]:
    """A project template folder listed before the apps' folders, as in a project."""
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [tmp_path]
    with override_settings(TEMPLATES=templates):
        yield tmp_path


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_project_template_of_the_same_name_replaces_the_signup_page(
    project_templates: Path, configure: Callable[..., None]
) -> None:
    configure(EMAIL_VERIFICATION="none")
    _write(
        project_templates,
        "appframework/signup.html",
        "<h1>Join us</h1>{% for field in form %}[{{ field.name }}]{% endfor %}",
    )
    page = browser().get(SIGNUP).content.decode()
    assert page == "<h1>Join us</h1>[email][password]"


def test_a_project_mail_template_replaces_the_suites(
    project_templates: Path, configure: Callable[..., None], mailoutbox: list[Any]
) -> None:
    configure(EMAIL_VERIFICATION="optional", EMAIL_VERIFICATION_BY_CODE=False)
    _write(
        project_templates, "appframework/email/confirm_email_subject.txt", "Welcome, {{ email }}"
    )
    _write(
        project_templates,
        "appframework/email/confirm_email_message.html",
        "<a href='{{ url }}'>Confirm</a>",
    )
    sign_up(browser(), NEW)
    (message,) = mailoutbox
    assert message.subject == f"Welcome, {NEW}"
    assert "Open this link to confirm" in message.body
    ((html, kind),) = message.alternatives
    assert kind == "text/html"
    assert html.startswith("<a href='http://testserver/accounts/email/confirm/")
