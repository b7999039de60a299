"""The attacks on an OAuth login, one test (or one parametrized test) each, named for it.

O1 login CSRF, O2 replay, O3 unverified email, O4 the identity key, O5 open redirect,
O6 mix-up, O7 authorization-code injection (PKCE), O8 code injection caught by the
OIDC nonce, O10 redirect_uri from the Host header, O11 client authentication, O13
disabled accounts. O12 (the provider's ``error=``) is in test_state.py. O9 (the rest of
the id_token checks: signature, ``aud``, ``sub``) does not apply: identity comes from
userinfo (docs/oauth.md, "What is not done, on purpose").

The provider is real (tests/oauth/peer.py); ``exchange_calls`` records each request to
its token endpoint, to show that refused callbacks never reach it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory, override_settings

from appframework.auth.sso import finish_sso_login
from appframework.oauth import OAuthProvider, generic_oidc
from appframework.oauth import manager as manager_module
from appframework.oauth.builders import map_oidc_userinfo
from appframework.oauth.client import _basic_auth
from appframework.oauth.models import OAuthIdentity
from appframework.oauth.state import SESSION_KEY
from testproject.blog.models import User
from tests.oauth.conftest import (
    JSON,
    OTHER_REDIRECT_URI,
    REDIRECT_URI,
    authorize_at_provider,
    identities,
    local_path,
    oauth_settings,
    problem,
    provider_callback,
    query_of,
    session_user_id,
    sign_in,
    signed_in_email,
    start,
    with_query,
)
from tests.oauth.peer import (
    NO_EMAIL_USER,
    UNVERIFIED_USER,
    VERIFIED_USER,
    LocalIdp,
    start_local_idp,
)

pytestmark = pytest.mark.django_db

ALICE = "alice@example.test"
VICTIM = "victim@example.test"


@pytest.fixture
def two_providers(local_provider: OAuthProvider) -> Iterator[OAuthProvider]:
    """ "local" and "other": two configured providers whose subject ids coincide (both
    are the local provider, so "alice" is "alice" at each)."""
    other = dataclasses.replace(local_provider, name="other", redirect_uri=OTHER_REDIRECT_URI)
    with oauth_settings([local_provider, other]):
        yield other


# -- O1 login CSRF ----------------------------------------------------------------------------
def test_o1_login_csrf_a_callback_started_in_another_browser_is_refused(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    # The attacker starts a sign-in in their own browser and signs in at the provider
    # with their own account, then makes the victim's browser load the callback.
    attacker = Client()
    attacker_callback = local_path(provider_callback(attacker, VERIFIED_USER))
    victim = Client()
    start(victim)  # the victim even has a sign-in of their own pending

    response = victim.get(attacker_callback, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_mismatch"
    assert session_user_id(victim) is None
    assert signed_in_email(victim) is None
    assert exchange_calls == []
    assert identities() == []
    assert User.objects.count() == 0


def test_o1_login_csrf_a_browser_with_no_session_is_refused(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    attacker_callback = local_path(provider_callback(Client(), VERIFIED_USER))
    victim = Client()

    response = victim.get(attacker_callback, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_mismatch"
    assert session_user_id(victim) is None
    assert exchange_calls == []


# -- O2 replay ----------------------------------------------------------------------------------
# (the replay of a spent state, with the same or a kept session cookie: test_state.py)
def test_o2_replay_an_already_used_code_with_a_fresh_state_is_refused_by_the_provider(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    first = Client()
    used = provider_callback(first)
    assert first.get(local_path(used), **JSON).status_code == 302

    # A fresh, valid state in another browser, carrying the code already redeemed.
    attacker = Client()
    fresh_state = query_of(start(attacker))["state"]
    response = attacker.get(local_path(with_query(used, state=fresh_state)), **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_invalid_grant"
    assert session_user_id(attacker) is None
    used_code = query_of(used)["code"]
    assert [call["code"] for call in exchange_calls] == [used_code, used_code]


# -- O3 unverified email ------------------------------------------------------------------------
def test_o3_unverified_email_is_not_linked_to_the_local_account_with_that_address(
    oauth_local: OAuthProvider,
) -> None:
    victim_account = User.objects.create_user(VICTIM, "victim's password")
    client = Client()

    response = sign_in(client, UNVERIFIED_USER, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_email_unverified"
    assert session_user_id(client) is None
    assert signed_in_email(client) is None
    assert identities() == []
    assert list(User.objects.values_list("pk", flat=True)) == [victim_account.pk]


def test_o3_unverified_email_creates_no_account_by_default(oauth_local: OAuthProvider) -> None:
    client = Client()

    response = sign_in(client, UNVERIFIED_USER, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_email_unverified"
    assert session_user_id(client) is None
    assert User.objects.count() == 0
    assert identities() == []


def test_o3_allow_unverified_email_creates_a_new_account(local_provider: OAuthProvider) -> None:
    client = Client()
    with oauth_settings([local_provider], ALLOW_UNVERIFIED_EMAIL=True):
        response = sign_in(client, UNVERIFIED_USER)

    assert response.status_code == 302
    user = User.objects.get(email=VICTIM)
    assert session_user_id(client) == str(user.pk)
    assert identities() == [("local", "unverified", user.pk)]


def test_o3_allow_unverified_email_still_never_links_an_existing_account(
    local_provider: OAuthProvider,
) -> None:
    User.objects.create_user(VICTIM, "victim's password")
    client = Client()
    with oauth_settings([local_provider], ALLOW_UNVERIFIED_EMAIL=True):
        response = sign_in(client, UNVERIFIED_USER, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_email_unverified"
    assert session_user_id(client) is None
    assert identities() == []


def test_o3_no_email_at_the_provider_is_403_email_required(oauth_local: OAuthProvider) -> None:
    client = Client()

    response = sign_in(client, NO_EMAIL_USER, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_email_required"
    assert session_user_id(client) is None
    assert User.objects.count() == 0
    assert identities() == []


@pytest.mark.parametrize(
    ("claim", "verified"),
    [(True, True), (False, False), ("true", False), ("false", False), (1, False), (None, False)],
)
def test_o3_only_a_json_true_email_verified_counts(claim: Any, verified: bool) -> None:
    userinfo: dict[str, Any] = {"sub": "s", "email": "a@example.test"}
    if claim is not None:
        userinfo["email_verified"] = claim

    assert map_oidc_userinfo(userinfo).email_verified is verified


# -- O4 identity key ----------------------------------------------------------------------------
def test_o4_the_same_subject_at_two_providers_is_two_identities(
    two_providers: OAuthProvider,
) -> None:
    elsewhere = User.objects.create_user("x@example.test", "pw")
    OAuthIdentity.objects.create(
        user=elsewhere, provider="local", provider_user_id="alice", email="x@example.test"
    )
    client = Client()

    response = sign_in(client, VERIFIED_USER, provider="other")

    assert response.status_code == 302
    new = User.objects.get(email=ALICE)
    assert new.pk != elsewhere.pk
    assert session_user_id(client) == str(new.pk)
    assert identities() == [("local", "alice", elsewhere.pk), ("other", "alice", new.pk)]
    # And "local"'s alice is still the other account.
    again = Client()
    assert sign_in(again, VERIFIED_USER, provider="local").status_code == 302
    assert session_user_id(again) == str(elsewhere.pk)


def test_o4_an_email_change_at_the_provider_keeps_the_same_local_user(
    oauth_local: OAuthProvider,
) -> None:
    # Alice signed in once when her address at the provider was another one.
    user = User.objects.create_user("old-alice@example.test", "pw")
    OAuthIdentity.objects.create(
        user=user, provider="local", provider_user_id="alice", email="old-alice@example.test"
    )
    client = Client()

    response = sign_in(client)

    assert response.status_code == 302
    assert session_user_id(client) == str(user.pk)
    assert User.objects.count() == 1
    identity = OAuthIdentity.objects.get()
    assert identity.user_id == user.pk
    assert identity.email == ALICE  # the provider's current address, recorded
    user.refresh_from_db()
    assert user.email == "old-alice@example.test"  # the local account is not changed


# -- O5 open redirect ---------------------------------------------------------------------------
EVIL_NEXT = [
    "https://evil.example",
    "//evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "https:evil.example",
    # What ?next=/%09/evil.example decodes to (browsers drop the tab: //evil.example).
    # The undecoded "/%09/evil.example" is a path on this site, and is not listed.
    "/\t/evil.example",
    "http://testserver@evil.example",
    "javascript:alert(1)",
    " //evil.example",
    "///evil.example",
]


def _sso_request(secure: bool = False) -> HttpRequest:
    request = RequestFactory().get("/auth/local/callback", secure=secure)
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    request.user = AnonymousUser()
    return request


@pytest.mark.parametrize("next_url", EVIL_NEXT)
def test_o5_open_redirect_next_off_this_site_goes_to_login_redirect_url(next_url: str) -> None:
    user = User.objects.create_user(ALICE, "pw")
    request = _sso_request()

    response = finish_sso_login(request, user, next_url, mfa=True)

    assert response.status_code == 302
    assert response["Location"] == "/"


@pytest.mark.parametrize(
    ("next_url", "secure", "expected"),
    [
        ("/ok", False, "/ok"),
        ("/ok?x=1#y", False, "/ok?x=1#y"),
        ("http://testserver/ok", False, "http://testserver/ok"),
        ("https://testserver/ok", True, "https://testserver/ok"),
        # An https page must not send the user on to plain http, even on this host.
        ("http://testserver/ok", True, "/"),
        (None, False, "/"),
        ("", False, "/"),
    ],
)
def test_o5_open_redirect_next_on_this_site_is_honoured(
    next_url: str | None, secure: bool, expected: str
) -> None:
    user = User.objects.create_user(ALICE, "pw")

    response = finish_sso_login(_sso_request(secure), user, next_url, mfa=True)

    assert response["Location"] == expected


def test_o5_open_redirect_the_default_is_oauth_login_redirect_url(
    local_provider: OAuthProvider,
) -> None:
    client = Client()
    with oauth_settings([local_provider], LOGIN_REDIRECT_URL="/posts"):
        response = sign_in(client, next="https://evil.example/")

    assert response.status_code == 302
    assert response["Location"] == "/posts"
    assert session_user_id(client) is not None


@pytest.mark.parametrize(
    ("raw_next", "expected"),
    [
        ("//evil.example", "/"),
        ("/%09/evil.example", "/"),
        ("/\\evil.example", "/"),
        ("/ok", "/ok"),
    ],
)
def test_o5_open_redirect_through_the_whole_flow(
    oauth_local: OAuthProvider, raw_next: str, expected: str
) -> None:
    client = Client()
    # The query as a browser sends it (so %09 arrives as a tab).
    response = client.get(f"/auth/local/redirect?next={raw_next}")
    callback = authorize_at_provider(response["Location"])

    final = client.get(local_path(callback))

    assert final.status_code == 302
    assert final["Location"] == expected
    assert session_user_id(client) is not None


# -- O6 mix-up ----------------------------------------------------------------------------------
def test_o6_mix_up_a_callback_naming_another_issuer_is_refused(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    callback = provider_callback(client)

    response = client.get(
        local_path(with_query(callback, iss="https://attacker-idp.example")), **JSON
    )

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_issuer_mismatch"
    assert session_user_id(client) is None
    assert exchange_calls == []


def test_o6_mix_up_a_missing_iss_is_refused_when_the_provider_sends_one(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    assert oauth_local.require_iss is True  # from discovery
    client = Client()
    callback = provider_callback(client)

    response = client.get(local_path(with_query(callback, iss=None)), **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_issuer_mismatch"
    assert exchange_calls == []


def test_o6_mix_up_the_matching_iss_passes(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    client = Client()
    callback = provider_callback(client)
    assert query_of(callback)["iss"] == oauth_local.issuer

    response = client.get(local_path(callback), **JSON)

    assert response.status_code == 302
    assert session_user_id(client) is not None
    assert len(exchange_calls) == 1


def test_o6_mix_up_without_require_iss_a_missing_iss_passes_but_a_wrong_one_does_not(
    local_provider: OAuthProvider,
) -> None:
    provider = dataclasses.replace(local_provider, require_iss=False)
    with oauth_settings([provider]):
        client = Client()
        callback = provider_callback(client)
        missing = client.get(local_path(with_query(callback, iss=None)), **JSON)

        other = Client()
        callback = provider_callback(other)
        wrong = other.get(local_path(with_query(callback, iss="http://127.0.0.1:1/o")), **JSON)

    assert missing.status_code == 302
    assert wrong.status_code == 403
    assert problem(wrong)["code"] == "oauth_issuer_mismatch"


# -- O7 authorization-code injection ---------------------------------------------------------------
# The victim signs in at the provider; the callback URL, with its unredeemed code, leaks
# to the attacker (a log, a Referer, a proxy) before the victim's browser loads it. The
# attacker starts a sign-in in their own browser and loads the callback with the
# victim's code and their own, valid state.
@dataclasses.dataclass
class Injection:
    response: Any  # the attacker's callback response
    stolen: str  # the victim's callback URL
    attacker_verifier: str | None  # what the attacker's sign-in stored


def inject_stolen_code(victim: Client, attacker: Client) -> Injection:
    stolen = provider_callback(victim)  # the victim's code, not redeemed
    attacker_state = query_of(start(attacker))["state"]
    verifier = attacker.session[SESSION_KEY][attacker_state].get("v")
    response = attacker.get(local_path(with_query(stolen, state=attacker_state)), **JSON)
    return Injection(response, stolen, verifier)


@pytest.fixture
def pkce_optional_provider(pkce_optional_idp: LocalIdp) -> OAuthProvider:
    """ "local" at the provider that accepts authorization requests without PKCE."""
    return generic_oidc(
        "local",
        pkce_optional_idp.client_id,
        pkce_optional_idp.client_secret,
        redirect_uri=REDIRECT_URI,
        issuer=pkce_optional_idp.issuer,
    )


def test_o7_code_injection_the_victims_code_redeemed_with_the_attackers_verifier_is_refused(
    oauth_local: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    assert oauth_local.pkce is True  # from discovery: the provider lists S256
    victim, attacker = Client(), Client()

    attack = inject_stolen_code(victim, attacker)

    # The provider refuses the code for the attacker's verifier.
    assert attack.response.status_code == 403
    assert problem(attack.response)["code"] == "oauth_invalid_grant"
    assert session_user_id(attacker) is None
    assert signed_in_email(attacker) is None
    assert identities() == []
    assert User.objects.count() == 0
    (call,) = exchange_calls
    stolen = attack.stolen
    assert call["code"] == query_of(stolen)["code"]
    assert call["code_verifier"] == attack.attacker_verifier
    assert attack.attacker_verifier != victim.session[SESSION_KEY][query_of(stolen)["state"]]["v"]
    # The code was live and only the verifier was wrong: the victim's own browser,
    # which holds the verifier, still signs in with it.
    assert victim.get(local_path(stolen), **JSON).status_code == 302
    assert signed_in_email(victim) == ALICE
    assert session_user_id(attacker) is None


def test_o7_code_injection_as_a_browser_sees_it_is_a_403_page(
    oauth_local: OAuthProvider,
) -> None:
    victim, attacker = Client(), Client()
    stolen = provider_callback(victim)
    attacker_state = query_of(start(attacker))["state"]

    response = attacker.get(
        local_path(with_query(stolen, state=attacker_state)),
        HTTP_ACCEPT="text/html,application/xhtml+xml",
    )

    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert signed_in_email(attacker) is None


def test_o7_code_injection_is_refused_at_a_provider_where_pkce_is_optional(
    pkce_optional_provider: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    # Sending a challenge is what makes the provider check the verifier.
    assert pkce_optional_provider.pkce is True
    with oauth_settings([pkce_optional_provider]):
        attack = inject_stolen_code(Client(), attacker := Client())

    assert attack.response.status_code == 403
    assert problem(attack.response)["code"] == "oauth_invalid_grant"
    assert session_user_id(attacker) is None
    assert User.objects.count() == 0
    assert len(exchange_calls) == 1


def test_o7_control_without_pkce_or_nonce_the_injected_code_signs_the_attacker_in_as_the_victim(
    pkce_optional_provider: OAuthProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client as it was before PKCE and the nonce, at a provider that does not insist
    # on PKCE: the attack works. This is what the two tests around it are refused for.
    monkeypatch.setattr(manager_module, "sends_nonce", lambda scope: False)
    provider = dataclasses.replace(pkce_optional_provider, pkce=False)
    with oauth_settings([provider]):
        attack = inject_stolen_code(Client(), attacker := Client())

    assert attack.attacker_verifier is None
    assert attack.response.status_code == 302, attack.response.content
    assert signed_in_email(attacker) == ALICE
    assert identities() == [("local", "alice", User.objects.get(email=ALICE).pk)]


# -- O8 code injection caught by the nonce --------------------------------------------------------
def test_o8_code_injection_without_pkce_is_refused_by_the_id_token_nonce(
    pkce_optional_provider: OAuthProvider, exchange_calls: list[dict[str, Any]]
) -> None:
    # PKCE off (a provider that does not support it): the code is redeemed, but the
    # ID token issued for it carries the victim's nonce, not the one this sign-in sent.
    provider = dataclasses.replace(pkce_optional_provider, pkce=False)
    with oauth_settings([provider]):
        attack = inject_stolen_code(Client(), attacker := Client())

    assert attack.response.status_code == 403
    assert problem(attack.response)["code"] == "oauth_nonce_mismatch"
    assert session_user_id(attacker) is None
    assert signed_in_email(attacker) is None
    assert identities() == []
    assert User.objects.count() == 0
    (call,) = exchange_calls
    assert call["code_verifier"] is None


# -- O10 redirect_uri ---------------------------------------------------------------------------
def test_o10_the_redirect_uri_is_the_configured_one_whatever_the_host_header(
    oauth_local: OAuthProvider,
) -> None:
    client = Client()
    with override_settings(ALLOWED_HOSTS=["testserver", "evil.example"]):
        response = client.get("/auth/local/redirect", HTTP_HOST="evil.example")

    assert response.status_code == 302
    params = query_of(response["Location"])
    assert params["redirect_uri"] == REDIRECT_URI
    assert "evil.example" not in response["Location"]


# -- O11 client authentication --------------------------------------------------------------------
def test_o11_basic_auth_percent_encodes_the_client_credentials() -> None:
    assert _basic_auth("plain-id", "plain-secret") == ("plain-id", "plain-secret")
    # Without the encoding, "a:b" + ":" + "c" would split as "a" / "b:c".
    assert _basic_auth("a:b", "c") == ("a%3Ab", "c")
    assert _basic_auth("id", "s:e/c r%t+") == ("id", "s%3Ae%2Fc%20r%25t%2B")


COLON_CLIENT_ID = "rp:one"
COLON_SECRET = "se:cret/with%odd+chars"


@pytest.fixture(scope="module")
def colon_idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A second provider process whose client id and secret contain ':' and friends."""
    idp = start_local_idp(
        tmp_path_factory.mktemp("colon-idp"),
        [REDIRECT_URI],
        client_id=COLON_CLIENT_ID,
        client_secret=COLON_SECRET,
    )
    try:
        yield idp
    finally:
        idp.stop()


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_o11_credentials_with_a_colon_sign_in_at_a_real_provider(
    colon_idp: Any, method: str
) -> None:
    provider = generic_oidc(
        "local", COLON_CLIENT_ID, COLON_SECRET, redirect_uri=REDIRECT_URI, issuer=colon_idp.issuer
    )
    provider = dataclasses.replace(provider, token_auth_method=method)
    client = Client()
    with oauth_settings([provider]):
        authorize_url = start(client)
        assert query_of(authorize_url)["client_id"] == COLON_CLIENT_ID
        response = client.get(local_path(authorize_at_provider(authorize_url)), **JSON)

    assert response.status_code == 302, response.content
    assert session_user_id(client) is not None


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_o11_a_wrong_client_secret_is_502_provider_error(
    local_provider: OAuthProvider, exchange_calls: list[dict[str, Any]], method: str
) -> None:
    provider = dataclasses.replace(
        local_provider, client_secret="not-the-secret", token_auth_method=method
    )
    client = Client()
    with oauth_settings([provider]):
        response = sign_in(client, **JSON)

    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert "token exchange" in document["detail"]
    assert "(invalid_client)" in document["detail"]
    assert "not-the-secret" not in response.content.decode()
    assert session_user_id(client) is None
    assert len(exchange_calls) == 1


# -- O13 disabled accounts ----------------------------------------------------------------------
def test_o13_a_deactivated_user_with_a_linked_identity_is_403_account_disabled(
    oauth_local: OAuthProvider,
) -> None:
    assert sign_in(Client()).status_code == 302
    User.objects.filter(email=ALICE).update(is_active=False)
    client = Client()

    response = sign_in(client, **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "account_disabled"
    assert session_user_id(client) is None
    assert signed_in_email(client) is None


def test_o13_a_user_deactivated_after_signing_in_is_anonymous_on_the_next_request(
    oauth_local: OAuthProvider,
) -> None:
    client = Client()
    assert sign_in(client).status_code == 302
    assert signed_in_email(client) == ALICE

    User.objects.filter(email=ALICE).update(is_active=False)

    assert signed_in_email(client) is None
