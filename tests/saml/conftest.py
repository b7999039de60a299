"""Shared fixtures and helpers of the appframework.saml tests.

A real signing IdP (``SigningIdp``, xmlsec1) trusts the service provider
``http://testserver/saml/test/metadata``; ``saml_settings`` installs the matching
provider ``test`` in ``APPFRAMEWORK["SAML"]``. ``start_login`` drives
``/saml/test/login`` and returns the AuthnRequest id the IdP read; ``post_acs`` posts a
Response to ``/saml/test/acs`` the way a browser sends the IdP's cross-site form: from
a client with no cookies (``SameSite=Lax`` keeps the session cookie off it), then
follows the ACS's 303 to ``?resume=<key>`` with the browser's own cookies, as the
top-level navigation it is.
"""

from __future__ import annotations

import base64
import logging
import re
import warnings
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.test.utils import override_settings

with warnings.catch_warnings():
    # pysaml2 7.5 imports a cipher mode from its old place in cryptography (a warning).
    warnings.filterwarnings("ignore", message=r"CFB has been moved")
    from appframework.saml import SamlProvider, saml_provider
    from testproject.local_idp.keys import KeyPair, make_keypair
    from testproject.local_idp.saml_idp import ParsedRequest, SigningIdp, SpInfo

IDP_ENTITY_ID = "http://idp.test/metadata"
IDP_SSO_URL = "http://idp.test/sso"
SP_ENTITY_ID = "http://testserver/saml/test/metadata"
ACS_URL = "http://testserver/saml/test/acs"
LOGIN_PATH = "/saml/test/login"
ACS_PATH = "/saml/test/acs"
METADATA_PATH = "/saml/test/metadata"
ALICE = "alice@example.test"
EVIL = "mallory@example.test"
JSON = {"HTTP_ACCEPT": "application/json"}

ProviderFactory = Callable[..., SamlProvider]
SettingsInstaller = Callable[..., SamlProvider]

_state: dict[str, SigningIdp] = {}


# -- keys and the IdP -------------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="session")
def _quiet_saml2() -> Iterator[None]:
    """pysaml2 logs every refusal, with a traceback, at ERROR: noise for tests whose
    point is that a response is refused."""
    saml2_logger = logging.getLogger("saml2")
    level = saml2_logger.level
    saml2_logger.setLevel(logging.CRITICAL + 1)
    yield
    saml2_logger.setLevel(level)


@pytest.fixture(scope="session")
def key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("saml-keys")


@pytest.fixture(scope="session")
def idp_keys(key_dir: Path) -> KeyPair:
    return make_keypair(key_dir, "idp", common_name="idp.test")


@pytest.fixture(scope="session")
def attacker_keys(key_dir: Path) -> KeyPair:
    # The genuine IdP's subject: only the key tells them apart.
    return make_keypair(key_dir, "attacker", common_name="idp.test")


@pytest.fixture(scope="session")
def sp_keys(key_dir: Path) -> KeyPair:
    return make_keypair(key_dir, "sp", common_name="testserver")


@pytest.fixture(scope="session")
def idp(idp_keys: KeyPair, sp_keys: KeyPair) -> Iterator[SigningIdp]:
    signing_idp = SigningIdp(
        entity_id=IDP_ENTITY_ID,
        sso_url=IDP_SSO_URL,
        keypair=idp_keys,
        service_providers=[SpInfo(SP_ENTITY_ID, ACS_URL, cert_b64=sp_keys.cert_b64)],
    )
    _state["idp"] = signing_idp
    yield signing_idp
    _state.pop("idp", None)


def current_idp() -> SigningIdp:
    idp = _state.get("idp")
    assert idp is not None, "request the `idp` fixture in this test"
    return idp


def respond(idp: SigningIdp, in_response_to: str | None = None, **kwargs: Any) -> str:
    """A Response of ``idp`` to the ``test`` provider (IdP-initiated without an id)."""
    kwargs.setdefault("sp_entity_id", SP_ENTITY_ID)
    kwargs.setdefault("acs_url", ACS_URL)
    return idp.create_response(in_response_to=in_response_to, **kwargs)


# -- the provider and its settings ------------------------------------------------------------


@pytest.fixture(scope="session")
def provider_kwargs(idp_keys: KeyPair) -> dict[str, Any]:
    return {
        "name": "test",
        "idp_entity_id": IDP_ENTITY_ID,
        "idp_sso_url": IDP_SSO_URL,
        "idp_x509_cert": idp_keys.cert_pem,
        "sp_entity_id": SP_ENTITY_ID,
        "acs_url": ACS_URL,
        # Most of these tests post a response no AuthnRequest asked for (``respond``
        # without an id); the library's default refuses those.
        "allow_idp_initiated": True,
    }


@pytest.fixture(scope="session")
def make_provider(provider_kwargs: dict[str, Any]) -> ProviderFactory:
    def make(**overrides: Any) -> SamlProvider:
        return saml_provider(**{**provider_kwargs, **overrides})

    return make


def appframework_with(saml: dict[str, Any], **sections: dict[str, Any]) -> dict[str, Any]:
    """The test settings' APPFRAMEWORK with ``SAML`` replaced (and any other section
    given), everything else (``MFA.CHALLENGE_URL``, ``AUTH.CSRF_EXEMPT``...) kept."""
    return {**settings.APPFRAMEWORK, "SAML": saml, **sections}


@pytest.fixture
def saml_settings(make_provider: ProviderFactory) -> Iterator[SettingsInstaller]:
    """``saml_settings(*providers, **saml_keys)``: install the providers (by default the
    ``test`` one) and any other ``SAML`` keys until the test ends; returns the first."""
    with ExitStack() as stack:

        def install(*providers: SamlProvider, **saml: Any) -> SamlProvider:
            chosen = list(providers) or [make_provider()]
            stack.enter_context(
                override_settings(APPFRAMEWORK=appframework_with({"PROVIDERS": chosen, **saml}))
            )
            return chosen[0]

        yield install


@pytest.fixture
def provider(saml_settings: SettingsInstaller) -> SamlProvider:
    """The default ``test`` provider, installed."""
    return saml_settings()


@pytest.fixture
def two_providers(saml_settings: SettingsInstaller, make_provider: ProviderFactory) -> None:
    """The ``test`` provider and a second one, ``other``, with its own entity id and ACS,
    trusting the same IdP: what one provider's flow leaves must not serve the other."""
    other = make_provider(
        name="other",
        sp_entity_id="http://testserver/saml/other/metadata",
        acs_url="http://testserver/saml/other/acs",
    )
    saml_settings(make_provider(), other)


# -- browser helpers --------------------------------------------------------------------------


def authn_request_query(location: str) -> dict[str, list[str]]:
    parts = urlsplit(location)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == IDP_SSO_URL, location
    return parse_qs(parts.query)


def parse_login_redirect(response: HttpResponse) -> ParsedRequest:
    assert response.status_code == 302, response.content
    return current_idp().parse_authn_request_query(authn_request_query(response["Location"]))


def start_login(client: Client, next: str | None = None, *, name: str = "test") -> str:
    """GET ``/saml/<name>/login`` and return the id of the AuthnRequest the IdP received."""
    path = f"/saml/{name}/login"
    if next is not None:
        path += "?" + urlencode({"next": next})
    return parse_login_redirect(client.get(path)).id


def request_id_in(location: str) -> str:
    """The ID of the deflated AuthnRequest in a redirect, read without the IdP (for a
    provider the IdP does not know)."""
    encoded = authn_request_query(location)["SAMLRequest"][0]
    xml = zlib.decompress(base64.b64decode(encoded), -15).decode()
    match = re.search(r'\bID="([^"]+)"', xml)
    assert match is not None, xml
    return match.group(1)


def post_acs(
    client: Client,
    xml: str | None,
    relay_state: str | None = None,
    *,
    path: str = ACS_PATH,
    with_cookies: bool = False,
    encoded: str | None = None,
    resume: bool = True,
) -> HttpResponse:
    """POST ``xml`` (base64, or ``encoded`` as given) as ``SAMLResponse`` to the ACS,
    then follow its 303 to the resume URL from ``client`` (with its cookies) and return
    that answer; a refusal at the POST is returned as it is.

    By default the POST is sent from a fresh client with no cookies and CSRF enforced,
    as the browser sends the IdP's cross-site form; the cookies it sets are then stored
    in ``client``, the browser's jar. ``with_cookies=True`` posts from ``client``
    itself. ``resume=False`` returns the POST's own answer (the 303).
    """
    data: dict[str, str] = {}
    if encoded is not None:
        data["SAMLResponse"] = encoded
    elif xml is not None:
        data["SAMLResponse"] = SigningIdp.encode(xml)
    if relay_state is not None:
        data["RelayState"] = relay_state
    sender = client if with_cookies else Client(enforce_csrf_checks=True)
    response = sender.post(path, data, **JSON)
    if not with_cookies:
        client.cookies.update(response.cookies)
    if not resume or response.status_code != 303:
        return response
    return client.get(resume_path(response), **JSON)


def resume_path(response: HttpResponse) -> str:
    """The resume URL of an ACS POST's 303, checked to be this ACS with a key."""
    assert response.status_code == 303, response.content
    location = response["Location"]
    parts = urlsplit(location)
    assert not parts.netloc and parts.path.startswith("/saml/"), location
    assert list(parse_qs(parts.query)) == ["resume"], location
    return location


def assert_problem(response: HttpResponse, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status and body.get("code") == code, body
    return body


def assert_redirect(response: HttpResponse, location: str) -> None:
    assert response.status_code == 302, response.content
    assert response["Location"] == location


def session_request(client: Client, path: str = "/") -> HttpRequest:
    """A request carrying ``client``'s cookies, with its session loaded."""
    cookie = client.cookies.get(settings.SESSION_COOKIE_NAME)
    headers = {"HTTP_COOKIE": f"{settings.SESSION_COOKIE_NAME}={cookie.value}"} if cookie else {}
    request = RequestFactory().get(path, **headers)
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    return request


def signed_in_user(client: Client) -> Any | None:
    """Whom ``client``'s session cookie signs in (read as any later request would)."""
    from appframework.auth import current_user_sync

    return current_user_sync(session_request(client))


def link_identity(user: Any, name_id: str = ALICE, *, provider: str = "test") -> Any:
    """Record ``name_id`` at ``provider`` as ``user``'s SAML identity, as a first
    sign-in through that provider would have."""
    from appframework.saml.models import SamlIdentity

    return SamlIdentity.objects.create(
        user=user, provider=provider, name_id=name_id, email=user.email or ""
    )


def acs_request(xml: str, relay_state: str | None = None) -> HttpRequest:
    """A POST to the ACS for calling ``saml_acs`` directly."""
    data = {"SAMLResponse": SigningIdp.encode(xml)}
    if relay_state is not None:
        data["RelayState"] = relay_state
    return RequestFactory().post(ACS_PATH, data)
