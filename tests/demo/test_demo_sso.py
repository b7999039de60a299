"""The demo's single sign-on, as ``scripts/demo`` wires it: providers from environment
variables (testproject/blog/sso.py), the buttons on /login, and both flows end to end
against the local provider process (OpenID Connect and SAML) over HTTP."""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin

import pytest
import requests
from django.test import Client

from appframework.auth.sessions import current_user_sync
from tests.oauth.peer import PASSWORD, VERIFIED_USER, LocalIdp, ProviderBrowser

from .conftest import BASE


@pytest.mark.django_db
def test_login_page_shows_no_sso_buttons_without_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OAUTH_LOCAL_ISSUER", "SAML_IDP_SSO_URL", "GOOGLE_CLIENT_ID"):
        monkeypatch.delenv(name, raising=False)
    body = Client().get("/login").content.decode()
    assert "/auth/local/redirect" not in body
    assert "/saml/local/login" not in body


@pytest.mark.django_db
def test_login_page_shows_a_button_per_configured_provider(
    demo_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_CLIENT_ID", "gh-id")
    body = Client().get("/login").content.decode()
    assert 'href="/auth/local/redirect"' in body
    assert 'href="/auth/github/redirect"' in body
    assert 'href="/auth/google/redirect"' not in body
    assert 'href="/saml/local/login"' in body


@pytest.mark.django_db(transaction=True)
def test_demo_oauth_button_signs_in_through_the_local_openid_provider(demo_env: None) -> None:
    client = Client()
    start = client.get("/auth/local/redirect?next=/posts")
    assert start.status_code == 302
    callback = ProviderBrowser().login_and_authorize(
        start["Location"], VERIFIED_USER, PASSWORD, f"{BASE}/auth/local/callback"
    )
    done = client.get(callback.removeprefix(BASE))
    assert done.status_code == 302
    assert done["Location"] == "/posts"
    assert client.session["_auth_user_id"]
    request = client.get("/").wsgi_request
    assert current_user_sync(request).email == "alice@example.test"


def _post_form(page: str) -> tuple[str, dict[str, str]]:
    action = html.unescape(re.search(r'<form[^>]*action="([^"]+)"', page).group(1))  # type: ignore[union-attr]
    fields = {
        name: html.unescape(value)
        for name, value in re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page)
    }
    return action, fields


@pytest.mark.django_db(transaction=True)
def test_demo_saml_button_signs_in_through_the_local_identity_provider(
    demo_env: None, idp: LocalIdp
) -> None:
    client = Client()
    start = client.get("/saml/local/login?next=/tenant")
    assert start.status_code == 302
    assert start["Location"].startswith(f"{idp.base_url}/saml/sso?SAMLRequest=")
    browser = requests.Session()
    url = start["Location"]
    response = browser.get(url, allow_redirects=True, timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text).group(1)  # type: ignore[union-attr]
    response = browser.post(
        response.url,
        data={"csrfmiddlewaretoken": token, "username": VERIFIED_USER, "password": PASSWORD},
        headers={"Referer": response.url},
        timeout=30,
    )
    assert response.status_code == 200, response.text[:300]
    action, fields = _post_form(response.text)
    assert action == f"{BASE}/saml/local/acs"
    # The IdP's auto-posting page: a cross-site POST, so a fresh client without cookies.
    acs = Client().post(urljoin(BASE, action).removeprefix(BASE), fields)
    # It only validates; the browser's own GET of the resume URL (with its session
    # cookie, which started the login) signs in.
    assert acs.status_code == 303
    assert acs["Location"].startswith("/saml/local/acs?resume=")
    done = client.get(acs["Location"])
    assert done.status_code == 302
    assert done["Location"] == "/tenant"
    request = client.get("/").wsgi_request
    assert current_user_sync(request).email == "alice@example.test"


@pytest.mark.django_db
def test_demo_saml_metadata_is_served(demo_env: None) -> None:
    response = Client().get("/saml/local/metadata")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/samlmetadata+xml"
    assert f'entityID="{BASE}/saml/local/metadata"' in response.content.decode()
