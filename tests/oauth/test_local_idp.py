"""The local OpenID Connect provider behaves as a real one, over HTTP only.

Nothing here uses appframework: these tests prove the peer that the OAuth client's tests
run against (discovery, login, code, token exchange with both client authentication
methods, userinfo claims, and the errors a client must handle).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.oauth.peer import (
    NO_EMAIL_USER,
    PASSWORD,
    POST_ONLY_CLIENT_ID,
    POST_ONLY_CLIENT_SECRET,
    UNVERIFIED_USER,
    VERIFIED_USER,
    LocalIdp,
    ProviderBrowser,
    start_local_idp,
)

REDIRECT_URI = "http://testserver/auth/local/callback"


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIdp]:
    provider = start_local_idp(
        tmp_path_factory.mktemp("local-idp"),
        [REDIRECT_URI],
        post_only_clients=[(POST_ONLY_CLIENT_ID, POST_ONLY_CLIENT_SECRET)],
    )
    try:
        yield provider
    finally:
        provider.stop()


# The PKCE verifier of every authorization request here unless a test says otherwise
# (the provider requires one).
VERIFIER = secrets.token_urlsafe(48)


def _callback_query(
    idp: LocalIdp,
    username: str,
    nonce: str | None = None,
    code_verifier: str | None = VERIFIER,
    **extra: str,
) -> tuple[dict[str, list[str]], str]:
    """Sign ``username`` in through a fresh browser; the callback's query, and the state
    sent."""
    state = secrets.token_urlsafe(16)
    browser = ProviderBrowser()
    try:
        url = browser.login_and_authorize(
            idp.authorize_url(
                REDIRECT_URI, state, nonce=nonce, code_verifier=code_verifier, **extra
            ),
            username,
            PASSWORD,
            REDIRECT_URI,
        )
    finally:
        browser.close()
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == REDIRECT_URI
    query = parse_qs(parts.query)
    assert query["state"] == [state]
    return query, state


def _callback(
    idp: LocalIdp,
    username: str,
    nonce: str | None = None,
    code_verifier: str | None = VERIFIER,
    **extra: str,
) -> tuple[str, str]:
    """Sign ``username`` in through a fresh browser; the callback's (code, state)."""
    query, state = _callback_query(idp, username, nonce, code_verifier, **extra)
    assert len(query.get("code", [])) == 1 and query["code"][0], query
    return query["code"][0], state


def _exchange(
    idp: LocalIdp,
    code: str,
    *,
    method: str = "client_secret_basic",
    secret: str | None = None,
    code_verifier: str | None = VERIFIER,
    client_id: str | None = None,
    **extra: str,
) -> requests.Response:
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI}
    if code_verifier is not None:
        data["code_verifier"] = code_verifier
    data.update(extra)
    secret = idp.client_secret if secret is None else secret
    client_id = idp.client_id if client_id is None else client_id
    auth: tuple[str, str] | None = None
    if method == "client_secret_basic":
        auth = (client_id, secret)
    else:
        data.update(client_id=client_id, client_secret=secret)
    return requests.post(f"{idp.issuer}/token/", data=data, auth=auth, timeout=30)


def _b64url(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def _verified_id_token(idp: LocalIdp, id_token: str) -> dict[str, Any]:
    """The ID token's claims, after checking its RS256 signature against the JWKS."""
    header_b64, payload_b64, signature_b64 = id_token.split(".")
    header = json.loads(_b64url(header_b64))
    assert header["alg"] == "RS256"
    jwks = requests.get(f"{idp.issuer}/.well-known/jwks.json", timeout=30).json()
    (jwk,) = [key for key in jwks["keys"] if key["kid"] == header["kid"]]
    public_key = rsa.RSAPublicNumbers(
        int.from_bytes(_b64url(jwk["e"]), "big"), int.from_bytes(_b64url(jwk["n"]), "big")
    ).public_key()
    # Raises InvalidSignature on a token the published key did not sign.
    public_key.verify(
        _b64url(signature_b64),
        f"{header_b64}.{payload_b64}".encode("ascii"),
        padding.PKCS1v15(),
        hashes.SHA256(),
    )
    return json.loads(_b64url(payload_b64))


def _userinfo(idp: LocalIdp, username: str) -> dict[str, Any]:
    code, _ = _callback(idp, username)
    token = _exchange(idp, code)
    assert token.status_code == 200, token.text
    response = requests.get(
        f"{idp.issuer}/userinfo/",
        headers={"Authorization": f"Bearer {token.json()['access_token']}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    return response.json()


def test_discovery_names_the_issuer_and_its_endpoints(idp: LocalIdp) -> None:
    assert idp.issuer == f"{idp.base_url}/o"
    response = requests.get(idp.discovery_url, timeout=30)
    assert response.status_code == 200
    document = response.json()
    assert document["issuer"] == idp.issuer
    assert document["authorization_endpoint"] == f"{idp.issuer}/authorize/"
    assert document["token_endpoint"] == f"{idp.issuer}/token/"
    assert document["userinfo_endpoint"] == f"{idp.issuer}/userinfo/"
    assert document["jwks_uri"] == f"{idp.issuer}/.well-known/jwks.json"
    assert document["response_types_supported"] == ["code"]
    assert {"client_secret_basic", "client_secret_post"} <= set(
        document["token_endpoint_auth_methods_supported"]
    )
    assert {"openid", "email", "profile"} <= set(document["scopes_supported"])
    assert {"sub", "email", "email_verified", "name", "picture", "preferred_username"} <= set(
        document["claims_supported"]
    )
    assert "RS256" in document["id_token_signing_alg_values_supported"]

    jwks = requests.get(document["jwks_uri"], timeout=30).json()
    (key,) = jwks["keys"]
    assert key["kty"] == "RSA" and key["alg"] == "RS256" and key["kid"]
    assert len(_b64url(key["n"])) == 256  # RSA 2048


def test_login_and_authorize_returns_the_callback_with_code_and_state(idp: LocalIdp) -> None:
    code, state = _callback(idp, VERIFIED_USER)
    assert code and state


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_the_code_is_exchanged_for_tokens(idp: LocalIdp, method: str) -> None:
    nonce = secrets.token_urlsafe(16)
    code, _ = _callback(idp, VERIFIED_USER, nonce=nonce)

    response = _exchange(idp, code, method=method)

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["access_token"]
    assert set(body["scope"].split()) == {"openid", "email", "profile"}
    claims = _verified_id_token(idp, body["id_token"])
    assert claims["iss"] == idp.issuer
    assert claims["aud"] == idp.client_id
    assert claims["sub"] == VERIFIED_USER
    assert claims["nonce"] == nonce
    assert claims["email"] == "alice@example.test"
    assert claims["email_verified"] is True
    assert claims["exp"] > claims["iat"]


def test_userinfo_of_a_verified_account(idp: LocalIdp) -> None:
    claims = _userinfo(idp, VERIFIED_USER)
    picture = claims.pop("picture")
    assert claims == {
        "sub": "alice",
        "email": "alice@example.test",
        "email_verified": True,
        "name": "Alice Example",
        "preferred_username": "alice",
    }
    assert picture == f"{idp.base_url}/avatars/alice.svg"
    image = requests.get(picture, timeout=30)
    assert image.status_code == 200
    assert image.headers["Content-Type"] == "image/svg+xml"


def test_userinfo_of_an_unverified_email(idp: LocalIdp) -> None:
    claims = _userinfo(idp, UNVERIFIED_USER)
    assert claims["sub"] == "unverified"
    assert claims["email"] == "victim@example.test"
    # A JSON false, not a missing claim or the string "false".
    assert claims["email_verified"] is False
    assert claims["name"] == "Not Verified"


def test_userinfo_of_an_account_without_email(idp: LocalIdp) -> None:
    claims = _userinfo(idp, NO_EMAIL_USER)
    assert claims["sub"] == "noemail"
    assert claims["preferred_username"] == "noemail"
    assert "email" not in claims
    assert "email_verified" not in claims


def test_a_code_is_single_use(idp: LocalIdp) -> None:
    code, _ = _callback(idp, VERIFIED_USER)
    assert _exchange(idp, code).status_code == 200

    again = _exchange(idp, code)

    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_a_wrong_client_secret_is_refused(idp: LocalIdp, method: str) -> None:
    code, _ = _callback(idp, VERIFIED_USER)

    refused = _exchange(idp, code, method=method, secret="not-the-secret")

    assert refused.status_code == 401
    assert refused.json()["error"] == "invalid_client"
    # Positive control: the same code with the right secret still works, so the refusal
    # was the secret's doing.
    assert _exchange(idp, code, method=method).status_code == 200


def test_a_client_registered_for_client_secret_post_is_refused_with_a_basic_header(
    idp: LocalIdp,
) -> None:
    # A provider may hold each client to the method it registered, whatever discovery
    # lists for the provider as a whole.
    document = requests.get(idp.discovery_url, timeout=30).json()
    assert "client_secret_basic" in document["token_endpoint_auth_methods_supported"]
    code, _ = _callback(idp, VERIFIED_USER, client_id=POST_ONLY_CLIENT_ID)
    client = {"client_id": POST_ONLY_CLIENT_ID, "secret": POST_ONLY_CLIENT_SECRET}

    basic = _exchange(idp, code, method="client_secret_basic", **client)

    assert basic.status_code == 401
    assert basic.json()["error"] == "invalid_client"
    # Positive control: the same code and secret as form fields are accepted.
    post = _exchange(idp, code, method="client_secret_post", **client)
    assert post.status_code == 200, post.text
    assert _verified_id_token(idp, post.json()["id_token"])["aud"] == POST_ONLY_CLIENT_ID


def test_discovery_lists_s256_as_the_only_pkce_method(idp: LocalIdp) -> None:
    document = requests.get(idp.discovery_url, timeout=30).json()

    assert document["code_challenge_methods_supported"] == ["S256"]


def test_pkce_is_required_an_authorization_request_without_a_challenge_is_refused(
    idp: LocalIdp,
) -> None:
    query, _ = _callback_query(idp, VERIFIED_USER, code_verifier=None)

    # Back to the client with an error, and no code.
    assert "code" not in query
    assert query["error"] == ["invalid_request"]
    assert query["error_description"] == ["Code challenge required."]


def test_pkce_plain_is_refused(idp: LocalIdp) -> None:
    # "plain" would put the verifier itself in the browser's URL.
    query, _ = _callback_query(
        idp,
        VERIFIED_USER,
        code_verifier=None,
        code_challenge=VERIFIER,
        code_challenge_method="plain",
    )

    assert "code" not in query
    assert query["error"] == ["invalid_request"]


def test_pkce_a_wrong_or_missing_code_verifier_is_refused(idp: LocalIdp) -> None:
    code, _ = _callback(idp, VERIFIED_USER)

    wrong = _exchange(idp, code, code_verifier=secrets.token_urlsafe(48))
    missing = _exchange(idp, code, code_verifier=None)

    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert (missing.status_code, missing.json()["error"]) == (400, "invalid_request")
    # Positive control: the same code with its own verifier is redeemed, so the
    # refusals were the verifier's doing (a refused verifier does not spend the code).
    assert _exchange(idp, code).status_code == 200


def test_with_pkce_optional_a_request_without_a_challenge_is_accepted_but_a_sent_one_is_checked(
    pkce_optional_idp: LocalIdp,
) -> None:
    code, _ = _callback(pkce_optional_idp, VERIFIED_USER, code_verifier=None)
    assert _exchange(pkce_optional_idp, code, code_verifier=None).status_code == 200

    code, _ = _callback(pkce_optional_idp, VERIFIED_USER)
    wrong = _exchange(pkce_optional_idp, code, code_verifier=secrets.token_urlsafe(48))
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert _exchange(pkce_optional_idp, code).status_code == 200


def test_an_unregistered_redirect_uri_is_not_redirected_to(idp: LocalIdp) -> None:
    evil = "http://attacker.test/callback"
    browser = ProviderBrowser()
    try:
        # Signed in first, so the provider gets to judge the request itself.
        browser.login_and_authorize(
            idp.authorize_url(REDIRECT_URI, "s1", code_verifier=VERIFIER),
            VERIFIED_USER,
            PASSWORD,
            REDIRECT_URI,
        )

        response = browser.session.get(
            idp.authorize_url(evil, "s2"), allow_redirects=False, timeout=30
        )
        assert response.status_code == 400
        assert "Location" not in response.headers
        assert "redirect" in response.text.lower()

        with pytest.raises(AssertionError, match="status 400"):
            browser.login_and_authorize(
                idp.authorize_url(evil, "s3"), VERIFIED_USER, PASSWORD, "http://attacker.test"
            )
    finally:
        browser.close()


def test_a_wrong_password_fails_the_flow_clearly(idp: LocalIdp) -> None:
    browser = ProviderBrowser()
    try:
        with pytest.raises(AssertionError, match="refused the login"):
            browser.login_and_authorize(
                idp.authorize_url(REDIRECT_URI, "s"), VERIFIED_USER, "wrong", REDIRECT_URI
            )
    finally:
        browser.close()


def test_the_provider_keeps_its_own_cookie_names(idp: LocalIdp) -> None:
    # The demo runs on another port of the same host, and browsers share cookies across
    # ports: the provider's session must not overwrite the demo's.
    browser = ProviderBrowser()
    try:
        browser.login_and_authorize(
            idp.authorize_url(REDIRECT_URI, "s", code_verifier=VERIFIER),
            VERIFIED_USER,
            PASSWORD,
            REDIRECT_URI,
        )
        names = {cookie.name for cookie in browser.session.cookies}
    finally:
        browser.close()
    assert names == {"local_idp_session", "local_idp_csrf"}


def test_the_data_directory_holds_the_keys(idp: LocalIdp) -> None:
    assert idp.log_path is not None
    data_dir: Path = idp.log_path.parent
    key = data_dir / "oidc-rsa-private-key.pem"
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert key.stat().st_mode & 0o077 == 0


def test_a_restart_on_the_same_data_directory_takes_the_new_client_settings(
    tmp_path: Path,
) -> None:
    # The demo keeps its data directory across runs, and may be started on another
    # address (another redirect URI) or with another secret.
    first = start_local_idp(tmp_path, ["http://127.0.0.1:9/old/callback"], client_secret="old")
    try:
        jwks_before = requests.get(f"{first.issuer}/.well-known/jwks.json", timeout=30).json()
    finally:
        first.stop()

    second = start_local_idp(tmp_path, [REDIRECT_URI], client_secret="new")
    try:
        code, _ = _callback(second, UNVERIFIED_USER)
        assert _exchange(second, code, secret="old").status_code == 401
        assert _exchange(second, code, secret="new").status_code == 200
        browser = ProviderBrowser()
        try:
            with pytest.raises(AssertionError, match="status 400"):
                browser.login_and_authorize(
                    second.authorize_url("http://127.0.0.1:9/old/callback", "s"),
                    VERIFIED_USER,
                    PASSWORD,
                    "http://127.0.0.1:9/old/callback",
                )
        finally:
            browser.close()
        # The signing key survives, so a relying party's cached JWKS stays valid.
        jwks_after = requests.get(f"{second.issuer}/.well-known/jwks.json", timeout=30).json()
        assert jwks_after == jwks_before
    finally:
        second.stop()
