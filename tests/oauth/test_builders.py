"""The hosted builders (Google, GitHub, Microsoft): their URLs and scopes, and how each
provider's answers become an ``OAuthUser``, from RECORDED responses
(tests/oauth/recorded/*.json: status, headers and body of each call).

The hosts cannot be reached from the tests, so the end-to-end tests mount a
``requests`` adapter on the OAuth client's session for those hosts only
(``RecordedAdapter``): everything above the transport — ``OAuthManager``, the state,
``ProviderClient``, the builders' userinfo code — runs as in production. The adapter
plays the provider strictly: the code, the redirect_uri, the client credentials and the
bearer token must be the expected ones, or it answers as the provider would (an OAuth
error), so a client that sent the wrong request fails these tests.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlencode, urlsplit

import pytest
import requests
import urllib3
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from appframework.auth.session_store import SessionStore
from appframework.exceptions import ForbiddenException
from appframework.oauth import (
    OAuthManager,
    OAuthProvider,
    OAuthProviderError,
    OAuthUser,
    generic_oidc,
    github,
    google,
    microsoft,
)
from appframework.oauth import client as client_module
from appframework.oauth.builders import (
    GITHUB_EMAILS_URL,
    map_microsoft_userinfo,
    map_oidc_userinfo,
)
from appframework.oauth.state import SESSION_KEY
from tests.oauth.conftest import query_of

RECORDED = Path(__file__).parent / "recorded"
CLIENT_ID = "recorded-client-id"
CLIENT_SECRET = "recorded-client-secret"
CODE = "4/0AcvDMrRecordedAuthorizationCode"


def recorded(name: str) -> dict[str, Any]:
    """A recorded response: ``status``, ``headers``, ``body``."""
    document: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    return document


def body(name: str) -> Any:
    return recorded(name)["body"]


# -- URLs and scopes ------------------------------------------------------------------------------
def test_google_urls_scope_and_issuer() -> None:
    provider = google("id", "secret", "https://app.example/auth/google/callback")

    assert provider.name == "google"
    assert provider.authorize_url == "https://accounts.google.com/o/oauth2/v2/auth"
    assert provider.token_url == "https://oauth2.googleapis.com/token"
    assert provider.userinfo_url == "https://openidconnect.googleapis.com/v1/userinfo"
    assert provider.scope == "openid email profile"
    assert provider.issuer == "https://accounts.google.com"
    assert provider.redirect_uri == "https://app.example/auth/google/callback"
    assert google("id", "s", "https://a.example/cb", scope="openid email").scope == "openid email"


def test_github_urls_and_scope() -> None:
    provider = github("id", "secret", "https://app.example/auth/github/callback")

    assert provider.name == "github"
    assert provider.authorize_url == "https://github.com/login/oauth/authorize"
    assert provider.token_url == "https://github.com/login/oauth/access_token"
    assert provider.userinfo_url == "https://api.github.com/user"
    assert provider.scope == "read:user user:email"
    assert provider.issuer is None
    assert provider.fetch_userinfo is not None


@pytest.mark.parametrize(
    "tenant",
    [
        "common",
        "organizations",
        "consumers",
        "72f988bf-86f1-41af-91ab-2d7cd011db47",
        "contoso.onmicrosoft.com",
        "fabrikam.com",
    ],
)
def test_microsoft_tenant_goes_into_the_urls(tenant: str) -> None:
    provider = microsoft(
        "id", "secret", "https://app.example/auth/microsoft/callback", tenant=tenant
    )

    base = f"https://login.microsoftonline.com/{tenant}/oauth2/v2.0"
    assert provider.authorize_url == f"{base}/authorize"
    assert provider.token_url == f"{base}/token"
    assert provider.userinfo_url == "https://graph.microsoft.com/v1.0/me"
    assert provider.scope == "openid email profile User.Read"


def test_microsoft_default_tenant_is_common() -> None:
    provider = microsoft("id", "secret", "https://app.example/auth/microsoft/callback")

    assert provider.authorize_url == (
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize"
    )


@pytest.mark.parametrize(
    "tenant",
    ["../x", "a/b", "common?x=1", "common#x", "", " common", "common/", "contoso.com/../x", None],
)
def test_microsoft_a_bad_tenant_is_a_value_error(tenant: Any) -> None:
    with pytest.raises(ValueError, match="tenant"):
        microsoft("id", "secret", "https://app.example/cb", tenant=tenant)


def test_microsoft_a_tenant_with_a_trailing_newline_is_a_value_error() -> None:
    # "anything else raises ValueError" (docs/oauth.md): the pattern's "$" also matches
    # before a final newline, which would end up inside the token URL.
    with pytest.raises(ValueError, match="tenant"):
        microsoft("id", "secret", "https://app.example/cb", tenant="common\n")


def test_generic_oidc_without_issuer_needs_the_three_urls() -> None:
    with pytest.raises(ImproperlyConfigured, match="token_url, userinfo_url"):
        generic_oidc(
            "x",
            "id",
            "s",
            authorize_url="https://idp.example/a",
            redirect_uri="https://a.example/cb",
        )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "a b", "letters, digits"),
        ("name", "../x", "letters, digits"),
        ("client_id", "", "no client_id"),
        ("token_url", "ftp://idp.example/token", "absolute http"),
        ("redirect_uri", "/auth/x/callback", "absolute http"),
        ("token_auth_method", "private_key_jwt", "client_secret_basic or client_secret_post"),
        # A string from an environment variable: "false" would read as on.
        ("pkce", "false", "pkce must be True or False"),
    ],
)
def test_a_provider_with_a_bad_field_is_a_value_error(field: str, value: str, message: str) -> None:
    values: dict[str, Any] = {
        "name": "x",
        "client_id": "id",
        "client_secret": "s",
        "authorize_url": "https://idp.example/a",
        "token_url": "https://idp.example/t",
        "userinfo_url": "https://idp.example/u",
        "redirect_uri": "https://app.example/cb",
        "scope": "openid",
        "map_userinfo": map_oidc_userinfo,
        field: value,
    }
    with pytest.raises(ValueError, match=message):
        OAuthProvider(**values)


# -- how the client secret is sent -----------------------------------------------------------------
@pytest.mark.parametrize("builder", [google, github, microsoft])
def test_the_hosted_builders_send_the_secret_as_form_fields_unless_told_otherwise(
    builder: Callable[..., OAuthProvider],
) -> None:
    # What each sent before token_auth_method was an argument, and what the recorded
    # token endpoints below check.
    assert builder("id", "s", "https://a.example/cb").token_auth_method == "client_secret_post"
    chosen = builder("id", "s", "https://a.example/cb", token_auth_method="client_secret_basic")
    assert chosen.token_auth_method == "client_secret_basic"


@pytest.mark.parametrize("builder", [google, github, microsoft, generic_oidc])
def test_a_token_auth_method_that_is_not_a_client_secret_method_is_a_value_error(
    builder: Callable[..., OAuthProvider],
) -> None:
    args: tuple[str, ...] = ("id", "s", "https://a.example/cb")
    if builder is generic_oidc:
        args = ("x", "id", "s", "https://i.example/a", "https://i.example/t", "https://i.example/u")
        args += ("https://a.example/cb",)
    with pytest.raises(ValueError, match="client_secret_basic or client_secret_post"):
        builder(*args, token_auth_method="private_key_jwt")


def test_a_provider_built_by_hand_sends_the_oidc_default_client_secret_basic() -> None:
    provider = OAuthProvider(
        name="x",
        client_id="id",
        client_secret="s",
        authorize_url="https://idp.example/a",
        token_url="https://idp.example/t",
        userinfo_url="https://idp.example/u",
        redirect_uri="https://app.example/cb",
        scope="openid",
        map_userinfo=map_oidc_userinfo,
    )

    assert provider.token_auth_method == "client_secret_basic"


# -- map_userinfo names its provider -------------------------------------------------------------
MAPPED = {
    "google": (lambda: google("id", "s", "https://a.example/cb"), "google_userinfo"),
    "github": (lambda: github("id", "s", "https://a.example/cb"), "github_user"),
    "microsoft": (lambda: microsoft("id", "s", "https://a.example/cb"), "microsoft_me"),
    "generic_oidc": (
        lambda: generic_oidc(
            "corp",
            "id",
            "s",
            "https://id.corp.example/a",
            "https://id.corp.example/t",
            "https://id.corp.example/u",
            "https://a.example/cb",
        ),
        "google_userinfo",  # standard OIDC claims
    ),
    # Discovery is not needed to map: nothing is read from the (unreachable) issuer.
    "generic_oidc-discovery": (
        lambda: generic_oidc(
            "corp", "id", "s", redirect_uri="https://a.example/cb", issuer="https://127.0.0.1:9"
        ),
        "google_userinfo",
    ),
}


@pytest.mark.parametrize(("build", "recording"), MAPPED.values(), ids=MAPPED)
def test_each_builders_map_userinfo_returns_a_user_of_its_provider(
    build: Callable[[], OAuthProvider], recording: str
) -> None:
    provider = build()

    user = provider.map_userinfo(body(recording))

    assert isinstance(user, OAuthUser)
    assert user.provider == provider.name
    assert user.provider_user_id


@pytest.mark.parametrize(("build", "recording"), MAPPED.values(), ids=MAPPED)
def test_map_userinfo_called_directly_keeps_the_providers_own_answer_in_raw(
    build: Callable[[], OAuthProvider], recording: str
) -> None:
    document = body(recording)
    assert build().map_userinfo(document).raw == document


# -- mapping each recorded answer -----------------------------------------------------------------
def test_google_userinfo_maps_to_a_verified_user() -> None:
    document = body("google_userinfo")
    user = map_oidc_userinfo(document)

    assert user == OAuthUser(
        provider="",
        provider_user_id="110248495921238986420",
        email="ada.lovelace.test@gmail.com",
        name="Ada Lovelace",
        avatar_url="https://lh3.googleusercontent.com/a/ACg8ocJ3kT0recordedPictureId=s96-c",
        email_verified=True,
        raw=document,
    )


@pytest.mark.parametrize("claim", [False, "true", "True", 1, None])
def test_google_email_verified_is_true_only_for_json_true(claim: Any) -> None:
    userinfo = dict(body("google_userinfo"), email_verified=claim)

    assert map_oidc_userinfo(userinfo).email_verified is False


class FakeGitHubHttp:
    """What ``_github_userinfo`` calls on the ``ProviderClient``, answering recorded
    documents (a non-2xx recording raises as the client does)."""

    def __init__(self, user: str, emails: str) -> None:
        self.user = recorded(user)
        self.emails = recorded(emails)
        self.calls: list[tuple[str, str]] = []

    def userinfo(self, url: str, access_token: str, what: str = "userinfo") -> dict[str, Any]:
        self.calls.append(("userinfo", url))
        assert access_token == "gho_token"
        return dict(self.user["body"])

    def userinfo_list(self, url: str, access_token: str, what: str) -> list[Mapping[str, Any]]:
        self.calls.append(("userinfo_list", url))
        if self.emails["status"] != 200:
            raise OAuthProviderError(f"HTTP {self.emails['status']}")
        return list(self.emails["body"])


GITHUB_CASES = {
    "public-verified": (
        "github_user",
        "github_emails",
        "octocat@github.com",
        True,
        "The Octocat",
    ),
    "public-unverified": (
        "github_user_unverified_public_email",
        "github_emails",
        "octocat@old-domain.example",
        False,
        "The Octocat",
    ),
    "no-public-email-primary-verified": (
        "github_user_no_public_email",
        "github_emails",
        "octocat@github.com",
        True,
        "octocat",  # no name: the login
    ),
    "emails-endpoint-404": (
        "github_user",
        "github_emails_404",
        "octocat@github.com",
        False,
        "The Octocat",
    ),
}


@pytest.mark.parametrize(
    ("user_file", "emails_file", "email", "verified", "name"),
    GITHUB_CASES.values(),
    ids=GITHUB_CASES,
)
def test_github_userinfo_maps_the_email_list(
    user_file: str, emails_file: str, email: str, verified: bool, name: str
) -> None:
    provider = github("id", "secret", "https://app.example/cb")
    http = FakeGitHubHttp(user_file, emails_file)

    assert provider.fetch_userinfo is not None
    document = provider.fetch_userinfo(provider, "gho_token", http)
    user = provider.map_userinfo(document)

    assert http.calls == [
        ("userinfo", "https://api.github.com/user"),
        ("userinfo_list", GITHUB_EMAILS_URL),
    ]
    assert user.provider_user_id == "583231"  # the numeric id, as text
    assert user.email == email
    assert user.email_verified is verified
    assert user.name == name
    assert user.avatar_url == "https://avatars.githubusercontent.com/u/583231?v=4"


def test_github_no_public_email_and_no_primary_verified_has_no_email() -> None:
    emails = [{"email": "a@example.test", "primary": True, "verified": False, "visibility": None}]
    http = FakeGitHubHttp("github_user_no_public_email", "github_emails")
    http.emails = {"status": 200, "body": emails}
    provider = github("id", "secret", "https://app.example/cb")

    assert provider.fetch_userinfo is not None
    user = provider.map_userinfo(provider.fetch_userinfo(provider, "gho_token", http))

    assert user.email is None
    assert user.email_verified is False


@pytest.mark.parametrize(
    ("name", "email", "display"),
    [
        ("microsoft_me", "AdeleV@contoso.onmicrosoft.com", "Adele Vance"),
        # userPrincipalName is not a mailbox: never used as the email.
        ("microsoft_me_no_mail", None, "Megan Bowen"),
    ],
)
def test_microsoft_me_maps_to_a_user_whose_email_is_never_verified(
    name: str, email: str | None, display: str
) -> None:
    document = body(name)

    user = map_microsoft_userinfo(document)

    assert user.provider_user_id == document["id"]
    assert user.email == email
    assert user.name == display
    assert user.email_verified is False
    assert map_microsoft_userinfo(dict(document, email_verified=True)).email_verified is False


# -- end to end through OAuthManager.handle_callback ------------------------------------------------
Recording = dict[str, Any]
Route = Callable[[requests.PreparedRequest], Recording]


def oauth_error(status: int, error: str) -> Recording:
    return {
        "status": status,
        "headers": {"Content-Type": "application/json"},
        "body": {"error": error},
    }


class RecordedAdapter(requests.adapters.BaseAdapter):
    """Answers ``routes[(method, url without query)]`` from recordings; records every
    request it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.routes: dict[tuple[str, str], Route] = {}
        self.sent: list[requests.PreparedRequest] = []
        # The parameters of the authorization request the user's browser took to the
        # provider: the provider binds the code to its code_challenge and nonce.
        self.authorization: dict[str, str] = {}

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        self.sent.append(request)
        parts = urlsplit(request.url or "")
        route = self.routes.get(
            (str(request.method), f"{parts.scheme}://{parts.netloc}{parts.path}")
        )
        answer = (
            route(request)
            if route
            else {"status": 404, "headers": {}, "body": {"message": "Not Found"}}
        )
        content = answer["body"]
        data = content if isinstance(content, bytes) else json.dumps(content).encode()
        raw = urllib3.HTTPResponse(
            body=io.BytesIO(data),
            headers=answer["headers"],
            status=answer["status"],
            preload_content=False,
            request_method=request.method,
        )
        return requests.adapters.HTTPAdapter().build_response(request, raw)

    def close(self) -> None:
        pass


HOSTED_HOSTS = [
    "https://accounts.google.com/",
    "https://oauth2.googleapis.com/",
    "https://openidconnect.googleapis.com/",
    "https://github.com/",
    "https://api.github.com/",
    "https://login.microsoftonline.com/",
    "https://graph.microsoft.com/",
]


@pytest.fixture
def hosted(db: Any) -> Iterator[RecordedAdapter]:
    """The recorded adapter, mounted on the OAuth client's session for the hosted
    providers' hosts (and removed afterwards). With the database: a sign-in spends its
    state in the suite's database store (``OAUTH["STATE_CACHE"]`` is ``AUTO``)."""
    session = client_module._session()
    saved = session.adapters.copy()
    adapter = RecordedAdapter()
    for prefix in HOSTED_HOSTS:
        session.mount(prefix, adapter)
    try:
        yield adapter
    finally:
        session.adapters = saved


def form(request: requests.PreparedRequest) -> dict[str, str]:
    raw = request.body or ""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return {k: v[0] for k, v in parse_qs(text).items()}


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def with_nonce(id_token: str, nonce: str) -> str:
    """The recorded ID token with the ``nonce`` claim the provider copies from the
    authorization request (its signature is left as recorded: the client does not check
    it)."""
    header, payload, signature = id_token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["nonce"] = nonce
    encoded = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"{header}.{encoded}.{signature}"


def token_route(
    adapter: RecordedAdapter,
    provider: OAuthProvider,
    name: str,
    *,
    form_by_default: bool = False,
    echo_nonce: bool = True,
    accepts: tuple[str, ...] = ("client_secret_post",),
) -> Route:
    """The token endpoint: the recorded answer for the expected request, else the OAuth
    error the provider would give. The code was issued for ``adapter.authorization``: its
    S256 ``code_challenge`` needs the matching ``code_verifier``, and the ID token
    carries its ``nonce`` (unless ``echo_nonce`` is False). ``form_by_default``: GitHub
    answers form-encoded unless JSON is asked for in Accept. ``accepts``: how the client
    may send its secret (the form fields only, unless told otherwise)."""

    def answer(request: requests.PreparedRequest) -> Recording:
        data = form(request)
        header = request.headers.get("Authorization", "")
        if header.startswith("Basic "):
            if "client_secret_basic" not in accepts or "client_secret" in data:
                return oauth_error(401, "invalid_client")
            decoded = base64.b64decode(header.removeprefix("Basic ")).decode()
            client_id, _, secret = (unquote_plus(part) for part in decoded.partition(":"))
        else:
            client_id, secret = data.get("client_id"), data.get("client_secret")
            if "client_secret_post" not in accepts:
                return oauth_error(401, "invalid_client")
        if client_id != CLIENT_ID or secret != CLIENT_SECRET:
            return oauth_error(401, "invalid_client")
        if data.get("grant_type") != "authorization_code":
            return oauth_error(400, "unsupported_grant_type")
        if data.get("code") != CODE or data.get("redirect_uri") != provider.redirect_uri:
            return oauth_error(400, "invalid_grant")
        challenge = adapter.authorization.get("code_challenge")
        if challenge is not None:
            verifier = data.get("code_verifier")
            if verifier is None:
                return oauth_error(400, "invalid_request")
            if adapter.authorization.get("code_challenge_method") != "S256":
                return oauth_error(400, "invalid_request")
            if s256(verifier) != challenge:
                return oauth_error(400, "invalid_grant")
        response = copy.deepcopy(recorded(name))
        nonce = adapter.authorization.get("nonce")
        if echo_nonce and nonce is not None and "id_token" in response["body"]:
            response["body"]["id_token"] = with_nonce(response["body"]["id_token"], nonce)
        if form_by_default and "application/json" not in request.headers.get("Accept", ""):
            return {
                "status": 200,
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
                "body": urlencode(response["body"]).encode(),
            }
        return response

    return answer


def bearer_route(token_file: str, name: str) -> Route:
    """A resource (userinfo): the recording for the recorded access token, else 401."""

    def answer(request: requests.PreparedRequest) -> Recording:
        token = recorded(token_file)["body"]["access_token"]
        if request.headers.get("Authorization") != f"Bearer {token}":
            return oauth_error(401, "invalid_token")
        return recorded(name)

    return answer


def sign_in_with(
    provider: OAuthProvider,
    adapter: RecordedAdapter,
    between: Callable[[dict[str, Any]], None] | None = None,
    **callback: str,
) -> OAuthUser:
    """redirect_url, then handle_callback with the recorded code, on one session (the
    adapter learns the authorization request; ``between`` may change the state's stored
    entry before the callback)."""
    manager = OAuthManager([provider], timeout=5)
    factory = RequestFactory()
    session = SessionStore()
    begin = factory.get(f"/auth/{provider.name}/redirect")
    begin.session = session
    authorize_url = manager.redirect_url(begin, provider.name, next="/after")
    assert authorize_url.startswith(provider.authorize_url + "?")
    params = query_of(authorize_url)
    assert params["client_id"] == CLIENT_ID
    assert params["redirect_uri"] == provider.redirect_uri
    assert params["scope"] == provider.scope
    adapter.authorization = params
    if between is not None:
        between(session[SESSION_KEY][params["state"]])
    finish = factory.get(
        f"/auth/{provider.name}/callback", {"code": CODE, "state": params["state"], **callback}
    )
    finish.session = session
    user = manager.handle_callback(finish, provider.name)
    assert finish.oauth_next == "/after"  # type: ignore[attr-defined]
    return user


def test_google_end_to_end_from_recorded_answers(hosted: RecordedAdapter) -> None:
    provider = google(CLIENT_ID, CLIENT_SECRET, "https://app.example/auth/google/callback")
    hosted.routes = {
        ("POST", provider.token_url): token_route(hosted, provider, "google_token"),
        ("GET", provider.userinfo_url): bearer_route("google_token", "google_userinfo"),
    }

    user = sign_in_with(provider, hosted, iss="https://accounts.google.com")

    assert user.provider == "google"
    assert user.provider_user_id == "110248495921238986420"
    assert user.email == "ada.lovelace.test@gmail.com"
    assert user.email_verified is True
    assert user.name == "Ada Lovelace"
    assert user.access_token == body("google_token")["access_token"]
    assert user.raw == body("google_userinfo")
    assert [(r.method, r.url) for r in hosted.sent] == [
        ("POST", provider.token_url),
        ("GET", provider.userinfo_url),
    ]


def test_google_end_to_end_refuses_a_callback_from_another_issuer(hosted: RecordedAdapter) -> None:
    provider = google(CLIENT_ID, CLIENT_SECRET, "https://app.example/auth/google/callback")

    with pytest.raises(ForbiddenException) as raised:
        sign_in_with(provider, hosted, iss="https://login.microsoftonline.com/common/v2.0")

    assert raised.value.code == "oauth_issuer_mismatch"
    assert hosted.sent == []


@pytest.mark.parametrize(
    ("user_file", "emails_file", "email", "verified", "name"),
    GITHUB_CASES.values(),
    ids=GITHUB_CASES,
)
def test_github_end_to_end_from_recorded_answers(
    hosted: RecordedAdapter, user_file: str, emails_file: str, email: str, verified: bool, name: str
) -> None:
    provider = github(CLIENT_ID, CLIENT_SECRET, "https://app.example/auth/github/callback")
    hosted.routes = {
        ("POST", provider.token_url): token_route(
            hosted, provider, "github_token", form_by_default=True
        ),
        ("GET", provider.userinfo_url): bearer_route("github_token", user_file),
        ("GET", GITHUB_EMAILS_URL): bearer_route("github_token", emails_file),
    }

    user = sign_in_with(provider, hosted)

    assert user.provider == "github"
    assert user.provider_user_id == "583231"
    assert user.email == email
    assert user.email_verified is verified
    assert user.name == name
    assert user.access_token == "gho_16C7e42F292c6912E7710c838347Ae178B4a"
    assert [r.url for r in hosted.sent] == [
        provider.token_url,
        provider.userinfo_url,
        GITHUB_EMAILS_URL,
    ]


@pytest.mark.parametrize(
    "tenant", ["common", "organizations", "72f988bf-86f1-41af-91ab-2d7cd011db47"]
)
def test_microsoft_end_to_end_from_recorded_answers(hosted: RecordedAdapter, tenant: str) -> None:
    provider = microsoft(
        CLIENT_ID, CLIENT_SECRET, "https://app.example/auth/microsoft/callback", tenant=tenant
    )
    hosted.routes = {
        ("POST", provider.token_url): token_route(hosted, provider, "microsoft_token"),
        ("GET", provider.userinfo_url): bearer_route("microsoft_token", "microsoft_me"),
    }

    user = sign_in_with(provider, hosted)

    assert user.provider == "microsoft"
    assert user.provider_user_id == "87d349ed-44d7-43e1-9a83-5f2406dee5bd"
    assert user.email == "AdeleV@contoso.onmicrosoft.com"
    assert user.email_verified is False
    assert user.name == "Adele Vance"
    assert hosted.sent[0].url == f"https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token"


@pytest.mark.parametrize("name", ["google", "microsoft"])
def test_google_and_microsoft_sign_in_with_client_secret_basic_when_told(
    hosted: RecordedAdapter, name: str
) -> None:
    # Both list client_secret_basic and client_secret_post in their discovery documents.
    builder, _nonce = BUILDERS[name]
    provider = builder(
        CLIENT_ID,
        CLIENT_SECRET,
        f"https://app.example/auth/{name}/callback",
        token_auth_method="client_secret_basic",
    )
    both = ("client_secret_basic", "client_secret_post")
    userinfo = "google_userinfo" if name == "google" else "microsoft_me"
    hosted.routes = {
        ("POST", provider.token_url): token_route(hosted, provider, f"{name}_token", accepts=both),
        ("GET", provider.userinfo_url): bearer_route(f"{name}_token", userinfo),
    }

    callback = {"iss": "https://accounts.google.com"} if name == "google" else {}
    user = sign_in_with(provider, hosted, **callback)

    assert user.provider == name
    token_request = hosted.sent[0]
    credentials = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    assert token_request.headers["Authorization"] == f"Basic {credentials}"
    assert "client_secret" not in form(token_request)


def test_the_recorded_provider_refuses_a_basic_header_unless_it_accepts_one(
    hosted: RecordedAdapter,
) -> None:
    # The control of the test above, and of the form-only default of the others.
    provider = google(
        CLIENT_ID,
        CLIENT_SECRET,
        "https://app.example/auth/google/callback",
        token_auth_method="client_secret_basic",
    )
    hosted.routes = {("POST", provider.token_url): token_route(hosted, provider, "google_token")}

    with pytest.raises(OAuthProviderError, match=r"HTTP 401 \(invalid_client\)"):
        sign_in_with(provider, hosted, iss="https://accounts.google.com")


def test_the_recorded_provider_refuses_a_wrong_client_secret(hosted: RecordedAdapter) -> None:
    # The adapter's checks can fail a client: the positive controls above pass because
    # the client sent the right request.
    provider = google(CLIENT_ID, "wrong-secret", "https://app.example/auth/google/callback")
    hosted.routes = {("POST", provider.token_url): token_route(hosted, provider, "google_token")}

    with pytest.raises(OAuthProviderError, match=r"HTTP 401 \(invalid_client\)"):
        sign_in_with(provider, hosted)


# -- PKCE and the nonce at the hosted providers ----------------------------------------------------
BUILDERS = {
    "google": (google, True),
    "github": (github, False),  # OAuth 2.0 only: no openid scope, so no nonce
    "microsoft": (microsoft, True),
}


@pytest.mark.parametrize(("builder", "nonce"), BUILDERS.values(), ids=BUILDERS)
def test_the_hosted_builders_send_an_s256_challenge_and_a_nonce_with_openid(
    builder: Callable[..., OAuthProvider], nonce: bool
) -> None:
    provider = builder(CLIENT_ID, CLIENT_SECRET, "https://app.example/auth/x/callback")
    request = RequestFactory().get("/auth/x/redirect")
    request.session = SessionStore()

    params = query_of(OAuthManager([provider]).redirect_url(request, provider.name))

    assert provider.pkce is True
    entry = request.session[SESSION_KEY][params["state"]]
    assert params["code_challenge_method"] == "S256"
    assert params["code_challenge"] == s256(entry["v"])
    assert ("nonce" in params) is nonce
    assert entry.get("o") == params.get("nonce")


@pytest.mark.parametrize("name", ["google", "github", "microsoft"])
def test_the_hosted_token_request_carries_the_verifier_of_the_challenge(
    hosted: RecordedAdapter, name: str
) -> None:
    builder, _nonce = BUILDERS[name]
    provider = builder(CLIENT_ID, CLIENT_SECRET, f"https://app.example/auth/{name}/callback")
    token_file = f"{name}_token"
    hosted.routes = {
        ("POST", provider.token_url): token_route(
            hosted, provider, token_file, form_by_default=name == "github"
        ),
        ("GET", provider.userinfo_url): bearer_route(
            token_file,
            {"google": "google_userinfo", "microsoft": "microsoft_me"}.get(name, "github_user"),
        ),
        ("GET", GITHUB_EMAILS_URL): bearer_route(token_file, "github_emails"),
    }

    callback = {"iss": "https://accounts.google.com"} if name == "google" else {}
    user = sign_in_with(provider, hosted, **callback)

    assert user.provider == name
    token_request = hosted.sent[0]
    assert token_request.url == provider.token_url
    assert s256(form(token_request)["code_verifier"]) == hosted.authorization["code_challenge"]


def test_the_recorded_provider_refuses_a_verifier_that_does_not_match_the_challenge(
    hosted: RecordedAdapter,
) -> None:
    # The adapter's PKCE check can fail a client: the sign-ins above pass because the
    # verifier sent was the one whose challenge the authorization request carried.
    provider = google(CLIENT_ID, CLIENT_SECRET, "https://app.example/auth/google/callback")
    hosted.routes = {("POST", provider.token_url): token_route(hosted, provider, "google_token")}

    def another_verifier(entry: dict[str, Any]) -> None:
        entry["v"] = "another-sign-in-s-verifier-0123456789abcdefghijk"

    with pytest.raises(ForbiddenException) as raised:
        sign_in_with(provider, hosted, another_verifier, iss="https://accounts.google.com")

    assert raised.value.code == "oauth_invalid_grant"
    assert [r.url for r in hosted.sent] == [provider.token_url]


@pytest.mark.parametrize("name", ["google", "microsoft"])
def test_a_hosted_id_token_without_this_sign_in_s_nonce_is_refused(
    hosted: RecordedAdapter, name: str
) -> None:
    builder, _nonce = BUILDERS[name]
    provider = builder(CLIENT_ID, CLIENT_SECRET, f"https://app.example/auth/{name}/callback")
    # The recorded ID tokens as they are: no nonce claim.
    hosted.routes = {
        ("POST", provider.token_url): token_route(
            hosted, provider, f"{name}_token", echo_nonce=False
        ),
    }

    callback = {"iss": "https://accounts.google.com"} if name == "google" else {}
    with pytest.raises(ForbiddenException) as raised:
        sign_in_with(provider, hosted, **callback)

    assert raised.value.code == "oauth_nonce_mismatch"
    assert [r.url for r in hosted.sent] == [provider.token_url]  # no userinfo call
