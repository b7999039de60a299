"""The login redirect (an AuthnRequest the IdP can read, signed when the provider has a
key pair), the SP metadata (schema-valid), the routes of an unknown provider, and the
CSRF exemption of exactly the ACS.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.test import Client, RequestFactory
from saml2.xmldsig import (
    DIGEST_SHA256,
    DIGEST_SHA384,
    DIGEST_SHA512,
    SIG_ECDSA_SHA256,
    SIG_ECDSA_SHA384,
    SIG_ECDSA_SHA512,
    SIG_RSA_SHA256,
    SIG_RSA_SHA384,
    SIG_RSA_SHA512,
)

from appframework.conf import app_settings
from appframework.saml import SamlProvider, is_saml_acs_request, metadata_xml
from appframework.saml import metadata as metadata_module
from appframework.saml.config import client_for
from appframework.saml.metadata import metadata_schema
from appframework.stores import shared_store
from testproject.blog.models import User
from testproject.local_idp.keys import KeyPair
from testproject.local_idp.saml_idp import SigningIdp

from .conftest import (
    ACS_URL,
    ALICE,
    IDP_SSO_URL,
    JSON,
    LOGIN_PATH,
    METADATA_PATH,
    SP_ENTITY_ID,
    ProviderFactory,
    SettingsInstaller,
    appframework_with,
    assert_problem,
    assert_redirect,
    parse_login_redirect,
    post_acs,
    respond,
    signed_in_user,
    start_login,
)

# A login records its request in the replay store: by default (AUTO, the test settings'
# "default" being a LocMemCache) the suite's database store.
pytestmark = pytest.mark.django_db

POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"
ALG_NS = "urn:oasis:names:tc:SAML:metadata:algsupport"


# -- login --------------------------------------------------------------------------------------


def test_login_redirects_to_the_idp_with_a_request_it_reads(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    response = Client().get(LOGIN_PATH)
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == IDP_SSO_URL
    assert "SAMLRequest" in parse_qs(location.query)
    assert "no-cache" in response["Cache-Control"]

    parsed = parse_login_redirect(response)
    assert parsed.sp_entity_id == SP_ENTITY_ID
    assert parsed.acs_url == ACS_URL
    assert parsed.signed is False
    assert f'AssertionConsumerServiceURL="{ACS_URL}"' in parsed.xml
    assert 'ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"' in parsed.xml


def test_login_with_an_sp_key_pair_signs_the_request(
    idp: SigningIdp,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    sp_keys: KeyPair,
) -> None:
    saml_settings(make_provider(sp_x509_cert=sp_keys.cert_pem, sp_private_key=sp_keys.key_pem))
    response = Client().get(LOGIN_PATH)
    query = parse_qs(urlsplit(response["Location"]).query)
    assert "Signature" in query and "SigAlg" in query
    parsed = parse_login_redirect(response)
    assert parsed.signed is True
    assert parsed.sp_entity_id == SP_ENTITY_ID


def test_the_signed_request_uses_rsa_sha256_not_sha1(
    saml_settings: SettingsInstaller, make_provider: ProviderFactory, sp_keys: KeyPair
) -> None:
    saml_settings(make_provider(sp_x509_cert=sp_keys.cert_pem, sp_private_key=sp_keys.key_pem))
    query = parse_qs(urlsplit(Client().get(LOGIN_PATH)["Location"]).query)
    assert query["SigAlg"] == ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]


def test_login_signed_with_a_key_the_idp_does_not_know_is_not_signed_for_it(
    idp: SigningIdp,
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    attacker_keys: KeyPair,
) -> None:
    # A positive control of the one above: `signed` means "verified with the SP's cert".
    saml_settings(
        make_provider(sp_x509_cert=attacker_keys.cert_pem, sp_private_key=attacker_keys.key_pem)
    )
    assert parse_login_redirect(Client().get(LOGIN_PATH)).signed is False


def test_each_login_is_a_new_request(idp: SigningIdp, provider: SamlProvider) -> None:
    browser = Client()
    assert start_login(browser) != start_login(browser)


@pytest.mark.django_db
def test_the_request_id_is_kept_for_request_ttl_only(
    idp: SigningIdp, saml_settings: SettingsInstaller, monkeypatch: pytest.MonkeyPatch
) -> None:
    saml_settings(REQUEST_TTL=1)
    cache = shared_store(app_settings.SAML.REPLAY_CACHE)
    real_set = cache.set
    timeouts: list[Any] = []

    def spy(key: str, value: Any, timeout: Any = None, version: Any = None) -> None:
        timeouts.append(timeout)
        real_set(key, value, timeout=timeout, version=version)

    monkeypatch.setattr(cache, "set", spy)
    request_id = start_login(Client(), next="/posts")
    assert timeouts == [1]
    xml = respond(idp, request_id)
    time.sleep(1.1)
    assert_problem(post_acs(Client(), xml), 403, "saml_invalid")
    assert not User.objects.exists()


def test_the_pysaml2_client_is_built_once_per_provider(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    start_login(browser)
    misses = client_for.cache_info().misses
    start_login(browser)
    start_login(browser, next="/posts")
    assert client_for.cache_info().misses == misses

    client_for.cache_clear()
    start_login(browser)
    start_login(browser)
    assert client_for.cache_info().misses <= 1


# -- metadata -----------------------------------------------------------------------------------


def _metadata(client: Client) -> tuple[Any, str]:
    response = client.get(METADATA_PATH)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/samlmetadata+xml"
    text = response.content.decode()
    metadata_schema().validate(text)
    return response, text


def _acs_services(text: str) -> list[dict[str, str]]:
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.fromstring(text)
    assert root.tag == f"{{{MD_NS}}}EntityDescriptor"
    assert root.get("entityID") == SP_ENTITY_ID
    return [dict(e.attrib) for e in root.iter(f"{{{MD_NS}}}AssertionConsumerService")]


def test_metadata_is_schema_valid_and_names_the_entity_and_the_post_acs(
    provider: SamlProvider, sp_keys: KeyPair
) -> None:
    _, text = _metadata(Client())
    services = _acs_services(text)
    assert [(s["Binding"], s["Location"]) for s in services] == [(POST_BINDING, ACS_URL)]
    assert "KeyDescriptor" not in text
    assert text == metadata_xml(provider)


def test_metadata_includes_the_sp_certificate_when_set(
    saml_settings: SettingsInstaller, make_provider: ProviderFactory, sp_keys: KeyPair
) -> None:
    saml_settings(make_provider(sp_x509_cert=sp_keys.cert_pem, sp_private_key=sp_keys.key_pem))
    _, text = _metadata(Client())
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.fromstring(text)
    certificates = [
        (e.text or "").replace("\n", "").strip() for e in root.iter(f"{{{DS_NS}}}X509Certificate")
    ]
    assert certificates == [sp_keys.cert_b64]
    assert 'AuthnRequestsSigned="true"' in text
    assert _acs_services(text)[0]["Location"] == ACS_URL
    assert "PRIVATE KEY" not in text


@pytest.mark.parametrize("allow_sha1", [False, True])
def test_metadata_advertises_only_sha256_and_stronger(
    saml_settings: SettingsInstaller, make_provider: ProviderFactory, allow_sha1: bool
) -> None:
    """An IdP reading the metadata picks from what it lists: MD5, SHA-1, RIPEMD-160,
    SHA-224 and DSA are never offered (allow_sha1 tolerates a legacy IdP, it does not
    invite others to sign with SHA-1)."""
    import xml.etree.ElementTree as ElementTree

    saml_settings(make_provider(allow_sha1=allow_sha1))
    _, text = _metadata(Client())
    root = ElementTree.fromstring(text)
    digests = {e.get("Algorithm") for e in root.iter(f"{{{ALG_NS}}}DigestMethod")}
    signing = {e.get("Algorithm") for e in root.iter(f"{{{ALG_NS}}}SigningMethod")}
    assert DIGEST_SHA256 in digests and SIG_RSA_SHA256 in signing
    assert digests <= {DIGEST_SHA256, DIGEST_SHA384, DIGEST_SHA512}
    assert signing <= {
        SIG_RSA_SHA256,
        SIG_RSA_SHA384,
        SIG_RSA_SHA512,
        SIG_ECDSA_SHA256,
        SIG_ECDSA_SHA384,
        SIG_ECDSA_SHA512,
    }
    for weak in ("md5", "sha1", "ripemd160", "sha224", "dsa-sha"):
        assert weak not in text.replace("ecdsa-sha", "ec-sha"), weak


def test_metadata_xml_raises_runtime_error_for_an_invalid_document(
    provider: SamlProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    metadata_xml.cache_clear()
    monkeypatch.setattr(
        metadata_module,
        "entity_descriptor",
        lambda config: f'<md:EntityDescriptor xmlns:md="{MD_NS}"/>',  # no entityID, no role
    )
    try:
        with pytest.raises(RuntimeError, match="'test' is invalid"):
            metadata_xml(provider)
    finally:
        metadata_xml.cache_clear()


# -- unknown provider ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/saml/nope/login"), ("post", "/saml/nope/acs"), ("get", "/saml/nope/metadata")],
)
def test_an_unknown_provider_is_404_on_every_route(
    idp: SigningIdp, provider: SamlProvider, method: str, path: str
) -> None:
    data = {"SAMLResponse": SigningIdp.encode(respond(idp))} if method == "post" else None
    response = getattr(Client(), method)(path, data, **JSON)
    assert_problem(response, 404, "saml_unknown_provider")


# -- CSRF ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("post", "/saml/x/acs", True),
        ("post", "/saml/test-2_b/acs", True),
        ("get", "/saml/x/acs", False),
        ("head", "/saml/x/acs", False),
        ("put", "/saml/x/acs", False),
        ("post", "/saml/x/acs/extra", False),
        ("post", "/other/saml/x/acs", False),
        ("post", "/saml/x/login", False),
        ("post", "/saml/x/metadata", False),
        ("post", "/saml//acs", False),
        ("post", "/saml/x/y/acs", False),
    ],
)
def test_is_saml_acs_request_matches_only_a_post_to_an_acs(
    method: str, path: str, expected: bool
) -> None:
    request = getattr(RequestFactory(), method)(path)
    assert is_saml_acs_request(request) is expected


def _signed_in_browser(idp: SigningIdp) -> Client:
    """A CSRF-checking browser already holding a session cookie (of another login)."""
    browser = Client(enforce_csrf_checks=True)
    assert_redirect(post_acs(browser, respond(idp, name_id="bob@example.test", attributes={})), "/")
    assert signed_in_user(browser) is not None
    return browser


@pytest.mark.django_db
def test_acs_post_with_a_session_cookie_passes_csrf_thanks_to_csrf_exempt(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = _signed_in_browser(idp)
    assert settings.SESSION_COOKIE_NAME in browser.cookies
    response = post_acs(browser, respond(idp), relay_state="/posts", with_cookies=True)
    assert_redirect(response, "/posts")
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


@pytest.mark.django_db
def test_without_csrf_exempt_an_acs_post_with_a_session_cookie_fails_csrf(
    idp: SigningIdp, make_provider: ProviderFactory
) -> None:
    from django.test.utils import override_settings

    auth = {**settings.APPFRAMEWORK["AUTH"], "CSRF_EXEMPT": None}
    with override_settings(
        APPFRAMEWORK=appframework_with({"PROVIDERS": [make_provider()]}, AUTH=auth)
    ):
        browser = _signed_in_browser(idp)  # no cookie on the way in: not CSRF-checked
        bob = signed_in_user(browser)
        response = post_acs(browser, respond(idp), relay_state="/posts", with_cookies=True)
        body = assert_problem(response, 403, "csrf_token_missing")
        assert "CSRF" in body["title"] or "CSRF" in body["detail"]
        assert signed_in_user(browser) == bob
        assert not User.objects.filter(email=ALICE).exists()
