"""A provider that fails is a 502 ``oauth_provider_error``, never a 500; a discovery
document that cannot be used is an ``OAuthDiscoveryError``.

The failing providers are small real HTTP servers on 127.0.0.1
(``http.server.PeerServer`` in a thread) answering what a broken provider
answers; the OAuth client reaches them over real sockets (nothing in ``requests`` is
replaced).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gzip
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from unittest.mock import ANY
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from appframework.oauth import OAuthDiscoveryError, OAuthProvider, generic_oidc
from appframework.oauth.client import MAX_DOCUMENT_BYTES
from testproject.blog.models import User
from tests.oauth.conftest import (
    JSON,
    OTHER_REDIRECT_URI,
    REDIRECT_URI,
    identities,
    oauth_settings,
    problem,
    query_of,
    session_user_id,
    sign_in,
    start,
)
from tests.oauth.peer import (
    DEFAULT_CLIENT_ID,
    DEFAULT_CLIENT_SECRET,
    LocalIdp,
    start_local_idp,
)
from tests.peer_server import PeerServer

pytestmark = pytest.mark.django_db

DISCOVERY = "/.well-known/openid-configuration"
CALLBACK = "http://testserver/auth/scripted/callback"


# -- a scripted provider ------------------------------------------------------------------------
@dataclass
class Answer:
    status: int = 200
    body: Any = b""  # bytes or str as they are; anything else as JSON
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass
class Seen:
    method: str
    target: str  # the request target (an absolute URL when sent to a proxy)
    path: str
    headers: dict[str, str]
    body: bytes


class ScriptedServer:
    """An HTTP server on ``host`` answering ``routes[path]`` (404 otherwise)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Answer | Callable[[Seen], Answer]] = {}
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                seen = Seen(
                    self.command,
                    self.path,
                    urlsplit(self.path).path,
                    dict(self.headers.items()),
                    self.rfile.read(length) if length else b"",
                )
                server.seen.append(seen)
                route = server.routes.get(seen.path)
                if route is None:
                    answer = Answer(404, {"error": "not_found"})
                else:
                    answer = route(seen) if callable(route) else route
                body = answer.encoded()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (an answer too large)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = PeerServer((host, 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    try:
        yield scripted
    finally:
        scripted.close()


def closed_port() -> int:
    """A port of 127.0.0.1 on which nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers; yields its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in held:
            connection.close()
        listener.close()


def scripted_provider(token_url: str, userinfo_url: str) -> OAuthProvider:
    return generic_oidc(
        "scripted",
        "scripted-client",
        "scripted-secret",
        authorize_url="https://idp.example/authorize",
        token_url=token_url,
        userinfo_url=userinfo_url,
        redirect_uri=CALLBACK,
    )


def run_callback(
    provider: OAuthProvider,
    accept: str = "application/json",
    authorization: dict[str, str] | None = None,
    **oauth: Any,
) -> tuple[Any, Client]:
    """Start a sign-in and come back with a code: the callback's response, and the
    browser. ``authorization`` receives the authorization request's parameters before
    the callback is sent (for a token route that answers with its nonce)."""
    client = Client()
    with oauth_settings([provider], **oauth):
        params = query_of(start(client, "scripted"))
        if authorization is not None:
            authorization.update(params)
        state = params["state"]
        response = client.get(
            f"/auth/scripted/callback?{urlencode({'state': state, 'code': 'the-code'})}",
            HTTP_ACCEPT=accept,
        )
    return response, client


TOKEN_OK = Answer(200, {"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600})
USERINFO_OK = Answer(
    200, {"sub": "u-1", "email": "scripted@example.test", "email_verified": True, "name": "S"}
)


# -- the harness works ----------------------------------------------------------------------------
def test_a_provider_that_answers_well_signs_the_user_in(server: ScriptedServer) -> None:
    server.routes = {"/token": TOKEN_OK, "/userinfo": USERINFO_OK}
    authorization: dict[str, str] = {}

    response, client = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo"),
        authorization=authorization,
    )

    assert response.status_code == 302
    assert session_user_id(client) == str(User.objects.get(email="scripted@example.test").pk)
    token, userinfo = server.seen
    assert (token.method, token.path) == ("POST", "/token")
    form = {k: v[0] for k, v in parse_qs(token.body.decode()).items()}
    verifier = form.pop("code_verifier")
    assert form == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "redirect_uri": CALLBACK,
    }
    # The verifier whose S256 hash the authorization request carried (no discovery:
    # PKCE is on by default).
    assert authorization["code_challenge_method"] == "S256"
    assert authorization["code_challenge"] == s256(verifier)
    assert token.headers["Authorization"].startswith("Basic ")  # no discovery: the default
    assert (userinfo.method, userinfo.path) == ("GET", "/userinfo")
    assert userinfo.headers["Authorization"] == "Bearer at-1"


# -- token endpoint and userinfo failures -----------------------------------------------------------
HTML_PAGE = "<!doctype html><title>Oops</title><h1>Something went wrong</h1>"
HUGE_TOKEN = {"access_token": "a" * MAX_DOCUMENT_BYTES, "token_type": "Bearer"}
GZIP_BOMB = gzip.compress(b" " * (5 * MAX_DOCUMENT_BYTES))

FAILURES = {
    "token-500": (
        Answer(500, HTML_PAGE, "text/html"),
        USERINFO_OK,
        "token exchange",
        "HTTP 500",
    ),
    "token-503-json": (
        Answer(503, {"error": "temporarily_unavailable"}),
        USERINFO_OK,
        "token exchange",
        "HTTP 503 (temporarily_unavailable)",
    ),
    "token-html": (Answer(200, HTML_PAGE, "text/html"), USERINFO_OK, "token exchange", "not JSON"),
    "token-empty": (Answer(200, b""), USERINFO_OK, "token exchange", "not a JSON object"),
    "token-json-list": (
        Answer(200, [{"access_token": "at-1", "token_type": "Bearer"}]),
        USERINFO_OK,
        "token exchange",
        "not a JSON object",
    ),
    "token-no-access-token": (
        Answer(200, {"token_type": "Bearer", "expires_in": 3600}),
        USERINFO_OK,
        "token exchange",
        "no access_token",
    ),
    "token-type-mac": (
        Answer(200, {"access_token": "at-1", "token_type": "mac", "mac_key": "k"}),
        USERINFO_OK,
        "token exchange",
        "unsupported token_type 'mac'",
    ),
    "token-over-1-MB": (Answer(200, HUGE_TOKEN), USERINFO_OK, "token exchange", "too large"),
    "token-gzip-bomb": (
        Answer(200, GZIP_BOMB, headers={"Content-Encoding": "gzip"}),
        USERINFO_OK,
        "token exchange",
        "too large",
    ),
    "token-redirect": (
        Answer(302, b"", headers={"Location": "https://elsewhere.example/token"}),
        USERINFO_OK,
        "token exchange",
        "HTTP 302",
    ),
    "token-401-invalid-client": (
        Answer(401, {"error": "invalid_client"}),
        USERINFO_OK,
        "token exchange",
        "HTTP 401 (invalid_client)",
    ),
    "userinfo-401": (
        TOKEN_OK,
        Answer(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": "Bearer"}),
        "userinfo",
        "HTTP 401 (invalid_token)",
    ),
    "userinfo-html": (TOKEN_OK, Answer(200, HTML_PAGE, "text/html"), "userinfo", "not JSON"),
    "userinfo-json-list": (TOKEN_OK, Answer(200, [{"sub": "u-1"}]), "userinfo", "JSON object"),
    "userinfo-no-sub": (
        TOKEN_OK,
        Answer(200, {"email": "scripted@example.test", "email_verified": True}),
        "userinfo",
        "no usable 'sub'",
    ),
    "userinfo-sub-not-a-string": (
        TOKEN_OK,
        Answer(200, {"sub": {"id": 1}, "email": "scripted@example.test"}),
        "userinfo",
        "no usable 'sub'",
    ),
}


@pytest.mark.parametrize(("token", "userinfo", "step", "reason"), FAILURES.values(), ids=FAILURES)
def test_a_failing_provider_is_502_provider_error(
    server: ScriptedServer, token: Answer, userinfo: Answer, step: str, reason: str
) -> None:
    server.routes = {"/token": token, "/userinfo": userinfo}

    response, client = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo")
    )

    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert document["title"] == "Sign-in provider error"
    assert step in document["detail"]
    assert reason in document["detail"]
    assert session_user_id(client) is None
    assert User.objects.count() == 0


def test_an_unreachable_token_endpoint_is_502(server: ScriptedServer) -> None:
    token_url = f"http://127.0.0.1:{closed_port()}/token"

    response, _ = run_callback(scripted_provider(token_url, f"{server.url}/userinfo"))

    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert "could not connect" in document["detail"]
    assert server.seen == []


def test_a_token_endpoint_that_never_answers_is_502_after_the_timeout() -> None:
    with silent_server() as url:
        began = time.monotonic()
        response, _ = run_callback(
            scripted_provider(f"{url}/token", f"{url}/userinfo"), TIMEOUT=0.5
        )
        elapsed = time.monotonic() - began

    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert "no answer within 0.5 s" in document["detail"]
    assert 0.5 <= elapsed < 5


def test_a_failing_provider_is_a_502_page_for_a_browser(server: ScriptedServer) -> None:
    server.routes = {"/token": Answer(500, HTML_PAGE, "text/html")}

    response, _ = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo"),
        accept="text/html,application/xhtml+xml",
    )

    assert response.status_code == 502
    assert response["Content-Type"].startswith("text/html")
    assert "Sign-in provider error" in response.content.decode()
    assert "Something went wrong" not in response.content.decode()


# -- the ID token's nonce ---------------------------------------------------------------------------
def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def jwt(claims: Any) -> str:
    """A JWS compact token with ``claims`` (the signature is not read by the client)."""
    header = _b64(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    return f"{header}.{_b64(json.dumps(claims).encode())}.{_b64(b'not-checked')}"


SENT = object()  # stands for "the nonce of the authorization request"


def token_with_id_token(authorization: dict[str, str], nonce: Any) -> Callable[[Seen], Answer]:
    """The token endpoint answering an ID token whose ``nonce`` claim is ``nonce``
    (``SENT``: the one the authorization request carried; ``None``: no claim)."""

    def answer(seen: Seen) -> Answer:
        claims: dict[str, Any] = {"iss": "http://127.0.0.1", "sub": "u-1", "aud": "x"}
        if nonce is SENT:
            claims["nonce"] = authorization["nonce"]
        elif nonce is not None:
            claims["nonce"] = nonce
        return Answer(
            200, {"access_token": "at-1", "token_type": "Bearer", "id_token": jwt(claims)}
        )

    return answer


NONCES = {
    "wrong-nonce": "another-sign-in's-nonce",
    "no-nonce-claim": None,
    "nonce-a-number": 12345,
    "nonce-a-list": ["x"],
    "nonce-empty": "",
}


@pytest.mark.parametrize("nonce", NONCES.values(), ids=NONCES)
def test_an_id_token_without_the_nonce_sent_is_403_nonce_mismatch(
    server: ScriptedServer, nonce: Any
) -> None:
    authorization: dict[str, str] = {}
    server.routes = {
        "/token": token_with_id_token(authorization, nonce),
        "/userinfo": USERINFO_OK,
    }

    response, client = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo"),
        authorization=authorization,
    )

    assert authorization["nonce"]  # one was sent
    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_nonce_mismatch"
    assert session_user_id(client) is None
    assert User.objects.count() == 0
    assert [seen.path for seen in server.seen] == ["/token"]  # userinfo is not read


def test_an_id_token_with_the_nonce_sent_signs_the_user_in(server: ScriptedServer) -> None:
    # The positive control of the refusals above.
    authorization: dict[str, str] = {}
    server.routes = {
        "/token": token_with_id_token(authorization, SENT),
        "/userinfo": USERINFO_OK,
    }

    response, client = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo"),
        authorization=authorization,
    )

    assert response.status_code == 302
    assert session_user_id(client) is not None
    assert [seen.path for seen in server.seen] == ["/token", "/userinfo"]


def test_no_id_token_in_the_answer_is_accepted(server: ScriptedServer) -> None:
    # OAuth-only providers (GitHub) issue none; identity comes from userinfo anyway.
    server.routes = {"/token": TOKEN_OK, "/userinfo": USERINFO_OK}
    authorization: dict[str, str] = {}

    response, _ = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo"),
        authorization=authorization,
    )

    assert authorization["nonce"]
    assert response.status_code == 302


def test_without_openid_in_the_scope_no_nonce_is_sent_and_the_id_token_is_not_read(
    server: ScriptedServer,
) -> None:
    authorization: dict[str, str] = {}
    server.routes = {
        "/token": Answer(
            200, {"access_token": "at-1", "token_type": "Bearer", "id_token": "not-a-jwt"}
        ),
        "/userinfo": USERINFO_OK,
    }
    provider = dataclasses.replace(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo"), scope="email"
    )

    response, _ = run_callback(provider, authorization=authorization)

    assert "nonce" not in authorization
    assert response.status_code == 302


MALFORMED_ID_TOKENS = {
    "not-a-jwt": ("not-a-jwt", "not a signed JWT"),
    "two-parts": ("aGVhZGVy.eyJub25jZSI6IngifQ", "not a signed JWT"),
    "encrypted-five-parts": ("a.b.c.d.e", "not a signed JWT"),
    "empty": ("", "not a signed JWT"),
    "payload-not-base64-json": ("aGVhZGVy.!!!.c2ln", "claims are not JSON"),
    "payload-not-utf8": ("aGVhZGVy." + _b64(b'{"nonce": "\xff"}') + ".c2ln", "claims are not JSON"),
    "payload-a-json-list": ("aGVhZGVy." + _b64(b"[1]") + ".c2ln", "not a JSON object"),
    "id-token-a-number": (42, "the id_token is not a string"),
}


@pytest.mark.parametrize(
    ("id_token", "reason"), MALFORMED_ID_TOKENS.values(), ids=MALFORMED_ID_TOKENS
)
def test_an_id_token_that_cannot_be_read_is_502_provider_error(
    server: ScriptedServer, id_token: Any, reason: str
) -> None:
    server.routes = {
        "/token": Answer(
            200, {"access_token": "at-1", "token_type": "Bearer", "id_token": id_token}
        ),
        "/userinfo": USERINFO_OK,
    }

    response, client = run_callback(
        scripted_provider(f"{server.url}/token", f"{server.url}/userinfo")
    )

    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert "token exchange" in document["detail"]
    assert reason in document["detail"]
    assert session_user_id(client) is None
    assert [seen.path for seen in server.seen] == ["/token"]


# -- discovery ------------------------------------------------------------------------------------
def discovery_document(issuer: str, base: str | None = None, **changes: Any) -> dict[str, Any]:
    base = base or issuer
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "userinfo_endpoint": f"{base}/userinfo",
        "response_types_supported": ["code"],
        **changes,
    }


def discover_at(issuer: str, **options: Any) -> OAuthProvider:
    """``generic_oidc`` configured from ``issuer``'s document, read now."""
    return generic_oidc(
        "d", "id", "secret", redirect_uri=CALLBACK, issuer=issuer, timeout=2, **options
    ).resolved()


def test_discovery_reads_the_endpoints_of_a_loopback_issuer_over_http(
    server: ScriptedServer,
) -> None:
    # The positive control of the refusals below.
    server.routes = {
        DISCOVERY: Answer(
            200,
            discovery_document(
                server.url,
                authorization_response_iss_parameter_supported=True,
                token_endpoint_auth_methods_supported=["client_secret_post"],
            ),
        )
    }

    provider = discover_at(server.url)

    assert provider.issuer == server.url
    assert provider.token_url == f"{server.url}/token"
    assert provider.require_iss is True
    assert provider.token_auth_method == "client_secret_post"


@pytest.mark.parametrize(
    ("methods", "pkce"),
    [(["S256"], True), (["plain", "S256"], True), (["plain"], False), ([], False), (None, False)],
)
def test_discovery_turns_pkce_on_when_the_document_lists_s256(
    server: ScriptedServer, methods: list[str] | None, pkce: bool
) -> None:
    changes = {} if methods is None else {"code_challenge_methods_supported": methods}
    server.routes = {DISCOVERY: Answer(200, discovery_document(server.url, **changes))}

    assert discover_at(server.url).pkce is pkce


@pytest.mark.parametrize("pkce", [True, False])
def test_generic_oidc_pkce_argument_overrides_discovery(server: ScriptedServer, pkce: bool) -> None:
    methods = ["plain"] if pkce else ["S256"]
    server.routes = {
        DISCOVERY: Answer(
            200, discovery_document(server.url, code_challenge_methods_supported=methods)
        )
    }

    provider = generic_oidc(
        "d", "id", "secret", redirect_uri=CALLBACK, issuer=server.url, timeout=2, pkce=pkce
    )

    assert provider.pkce is pkce


def test_generic_oidc_without_discovery_has_pkce_on_unless_turned_off() -> None:
    urls = {
        "authorize_url": "https://idp.example/a",
        "token_url": "https://idp.example/t",
        "userinfo_url": "https://idp.example/u",
        "redirect_uri": CALLBACK,
    }

    assert generic_oidc("x", "id", "s", **urls).pkce is True
    assert generic_oidc("x", "id", "s", **urls, pkce=False).pkce is False


def test_discovery_without_s256_signs_in_without_pkce(server: ScriptedServer) -> None:
    server.routes = {
        DISCOVERY: Answer(200, discovery_document(server.url)),  # no methods listed
        "/token": TOKEN_OK,
        "/userinfo": USERINFO_OK,
    }
    provider = generic_oidc(
        "scripted", "id", "secret", redirect_uri=CALLBACK, issuer=server.url, timeout=2
    )
    authorization: dict[str, str] = {}

    response, client = run_callback(provider, authorization=authorization)

    assert provider.pkce is False
    assert "code_challenge" not in authorization
    assert "code_challenge_method" not in authorization
    assert response.status_code == 302
    assert session_user_id(client) is not None
    token = next(seen for seen in server.seen if seen.path == "/token")
    assert "code_verifier" not in parse_qs(token.body.decode())


def test_discovery_of_an_unreachable_issuer_raises() -> None:
    issuer = f"http://127.0.0.1:{closed_port()}"

    with pytest.raises(OAuthDiscoveryError, match="Could not read the OIDC discovery document"):
        discover_at(issuer)


@pytest.mark.parametrize(
    "answer",
    [
        Answer(200, HTML_PAGE, "text/html"),
        Answer(200, ["not", "an", "object"]),
        Answer(404, {"error": "not_found"}),
    ],
    ids=["html", "json-list", "404"],
)
def test_discovery_of_a_document_that_is_not_a_json_object_raises(
    server: ScriptedServer, answer: Answer
) -> None:
    server.routes = {DISCOVERY: answer}

    with pytest.raises(OAuthDiscoveryError, match="Could not read"):
        discover_at(server.url)


def test_discovery_of_a_document_naming_another_issuer_raises(server: ScriptedServer) -> None:
    server.routes = {DISCOVERY: Answer(200, discovery_document("https://other-idp.example"))}

    with pytest.raises(
        OAuthDiscoveryError, match=re.escape("names issuer 'https://other-idp.example'")
    ):
        discover_at(server.url)


def test_discovery_errors_are_improperly_configured() -> None:
    assert issubclass(OAuthDiscoveryError, ImproperlyConfigured)


@pytest.fixture
def proxied(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    """Plain-http requests go through ``server`` as their HTTP proxy, so that it can play
    a provider at a host name that is not loopback (``idp.example``)."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.setenv("http_proxy", server.url)
    return server


def test_discovery_refuses_http_endpoints_for_an_issuer_that_is_not_loopback(
    proxied: ScriptedServer,
) -> None:
    issuer = "http://idp.example"
    proxied.routes = {DISCOVERY: Answer(200, discovery_document(issuer))}

    with pytest.raises(OAuthDiscoveryError, match="no usable authorization_endpoint"):
        discover_at(issuer)

    # The document was read from idp.example (through the proxy): the refusal is the
    # endpoint check's doing.
    (seen,) = proxied.seen
    assert seen.target == f"{issuer}{DISCOVERY}"
    assert seen.headers["Host"] == "idp.example"
    # Positive control: the same issuer with https endpoints is accepted.
    proxied.routes = {DISCOVERY: Answer(200, discovery_document(issuer, "https://idp.example"))}
    assert discover_at(issuer).token_url == "https://idp.example/token"


@pytest.mark.parametrize(
    "missing", ["authorization_endpoint", "token_endpoint", "userinfo_endpoint"]
)
def test_discovery_without_an_endpoint_raises(server: ScriptedServer, missing: str) -> None:
    document = discovery_document(server.url)
    del document[missing]
    server.routes = {DISCOVERY: Answer(200, document)}

    with pytest.raises(OAuthDiscoveryError, match=f"no usable {missing}"):
        discover_at(server.url)


# -- how generic_oidc sends the client secret -----------------------------------------------------
@pytest.mark.parametrize(
    ("listed", "method"),
    [
        (None, "client_secret_basic"),  # OIDC Discovery: absent means client_secret_basic
        (["client_secret_basic", "client_secret_post"], "client_secret_basic"),
        (["client_secret_post", "client_secret_basic"], "client_secret_basic"),
        (["client_secret_basic"], "client_secret_basic"),
        (["client_secret_post"], "client_secret_post"),
        (["private_key_jwt", "client_secret_post"], "client_secret_post"),
    ],
)
def test_generic_oidc_sends_client_secret_basic_unless_discovery_lists_only_post(
    server: ScriptedServer, listed: list[str] | None, method: str
) -> None:
    changes = {} if listed is None else {"token_endpoint_auth_methods_supported": listed}
    server.routes = {DISCOVERY: Answer(200, discovery_document(server.url, **changes))}

    assert discover_at(server.url).token_auth_method == method


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_generic_oidc_token_auth_method_argument_wins_over_discovery(
    server: ScriptedServer, method: str
) -> None:
    both = ["client_secret_basic", "client_secret_post"]
    server.routes = {
        DISCOVERY: Answer(
            200, discovery_document(server.url, token_endpoint_auth_methods_supported=both)
        )
    }

    assert discover_at(server.url, token_auth_method=method).token_auth_method == method


def test_generic_oidc_token_auth_method_argument_is_taken_when_discovery_lists_none(
    server: ScriptedServer,
) -> None:
    server.routes = {DISCOVERY: Answer(200, discovery_document(server.url))}

    provider = discover_at(server.url, token_auth_method="client_secret_post")

    assert provider.token_auth_method == "client_secret_post"


def test_generic_oidc_without_discovery_sends_client_secret_basic_unless_told() -> None:
    urls = {
        "authorize_url": "https://idp.example/a",
        "token_url": "https://idp.example/t",
        "userinfo_url": "https://idp.example/u",
        "redirect_uri": CALLBACK,
    }

    assert generic_oidc("x", "id", "s", **urls).token_auth_method == "client_secret_basic"
    post = generic_oidc("x", "id", "s", **urls, token_auth_method="client_secret_post")
    assert post.token_auth_method == "client_secret_post"


@pytest.mark.parametrize(
    ("listed", "chosen", "message"),
    [
        (["client_secret_basic"], "client_secret_post", "lists ['client_secret_basic']"),
        (["client_secret_post"], "client_secret_basic", "lists ['client_secret_post']"),
        (["private_key_jwt"], None, "neither client_secret_basic nor client_secret_post"),
        ([], None, "neither client_secret_basic nor client_secret_post"),
    ],
)
def test_a_token_auth_method_discovery_does_not_list_is_a_configuration_error(
    server: ScriptedServer, listed: list[str], chosen: str | None, message: str
) -> None:
    server.routes = {
        DISCOVERY: Answer(
            200, discovery_document(server.url, token_endpoint_auth_methods_supported=listed)
        )
    }

    with pytest.raises(OAuthDiscoveryError, match=re.escape(message)) as raised:
        discover_at(server.url, token_auth_method=chosen)

    assert isinstance(raised.value, ImproperlyConfigured)
    assert "token_endpoint_auth_methods_supported" in str(raised.value)


def test_a_token_auth_method_that_is_no_client_secret_method_fails_before_any_request(
    server: ScriptedServer,
) -> None:
    with pytest.raises(ValueError, match="client_secret_basic or client_secret_post"):
        generic_oidc(
            "d",
            "id",
            "secret",
            redirect_uri=CALLBACK,
            issuer=server.url,
            token_auth_method="private_key_jwt",
        )

    assert server.seen == []


def test_a_token_auth_method_discovery_does_not_list_is_502_naming_it(
    server: ScriptedServer,
) -> None:
    only_basic = discovery_document(
        server.url, token_endpoint_auth_methods_supported=["client_secret_basic"]
    )
    server.routes = {DISCOVERY: Answer(200, only_basic)}
    provider = generic_oidc(
        "scripted",
        "id",
        "secret",
        redirect_uri=CALLBACK,
        issuer=server.url,
        timeout=2,
        token_auth_method="client_secret_post",
    )

    with oauth_settings([provider]):
        response = Client().get("/auth/scripted/redirect", **JSON)

    assert response.status_code == 502
    document = problem(response)
    assert document["code"] == "oauth_provider_error"
    assert "token_auth_method='client_secret_post'" in document["detail"]


def test_discovery_listing_only_post_sends_the_secret_as_form_fields(
    server: ScriptedServer,
) -> None:
    def token(seen: Seen) -> Answer:
        form = parse_qs(seen.body.decode())
        if "Authorization" in seen.headers or form.get("client_secret") != ["secret"]:
            return Answer(401, {"error": "invalid_client"})
        return TOKEN_OK

    server.routes = {
        DISCOVERY: Answer(
            200,
            discovery_document(
                server.url, token_endpoint_auth_methods_supported=["client_secret_post"]
            ),
        ),
        "/token": token,
        "/userinfo": USERINFO_OK,
    }
    provider = generic_oidc(
        "scripted", "id", "secret", redirect_uri=CALLBACK, issuer=server.url, timeout=2
    )

    response, client = run_callback(provider)

    assert response.status_code == 302, response.content
    assert session_user_id(client) is not None
    sent = next(seen for seen in server.seen if seen.path == "/token")
    assert "Authorization" not in sent.headers
    assert parse_qs(sent.body.decode())["client_id"] == ["id"]


# -- discovery on first use, per provider ----------------------------------------------------------
def test_generic_oidc_with_an_issuer_reads_nothing_until_first_use(server: ScriptedServer) -> None:
    server.routes = {DISCOVERY: Answer(200, discovery_document(server.url))}

    provider = generic_oidc("d", "id", "secret", redirect_uri=CALLBACK, issuer=server.url)

    assert server.seen == []
    assert "not discovered yet" in repr(provider)  # a repr reaches no network either
    assert server.seen == []
    assert provider.token_url == f"{server.url}/token"
    assert provider.pkce is False and provider.issuer == server.url
    assert provider.resolved().authorize_url == f"{server.url}/authorize"
    assert [seen.path for seen in server.seen] == [DISCOVERY]  # read once, then kept


def test_a_callback_with_a_foreign_state_reads_no_discovery_document(
    server: ScriptedServer,
) -> None:
    server.routes = {DISCOVERY: Answer(200, discovery_document(server.url))}
    provider = generic_oidc(
        "scripted", "id", "secret", redirect_uri=CALLBACK, issuer=server.url, timeout=2
    )

    with oauth_settings([provider]):
        response = Client().get("/auth/scripted/callback?state=forged&code=c", **JSON)

    assert response.status_code == 403
    assert problem(response)["code"] == "oauth_state_mismatch"
    assert server.seen == []


def test_generic_oidc_an_issuer_that_is_not_a_url_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="absolute http"):
        generic_oidc("d", "id", "secret", redirect_uri=CALLBACK, issuer="id.corp.example")


def test_a_failed_discovery_is_tried_again_on_the_next_use_and_kept_once_it_worked(
    server: ScriptedServer,
) -> None:
    server.routes = {DISCOVERY: Answer(503, HTML_PAGE, "text/html")}
    provider = generic_oidc("d", "id", "secret", redirect_uri=CALLBACK, issuer=server.url)

    for _ in range(2):
        with pytest.raises(OAuthDiscoveryError, match="HTTP 503"):
            provider.resolved()
    server.routes = {DISCOVERY: Answer(200, discovery_document(server.url))}

    assert provider.resolved().token_url == f"{server.url}/token"
    assert provider.resolved() is provider.resolved()
    assert [seen.path for seen in server.seen] == [DISCOVERY] * 3


def test_uses_waiting_for_a_failing_discovery_share_its_failure(server: ScriptedServer) -> None:
    # An issuer that answers slowly (or not at all, until the timeout) must not hold
    # each waiting request for a read of its own.
    def slow_failure(seen: Seen) -> Answer:
        time.sleep(0.5)
        return Answer(503, HTML_PAGE, "text/html")

    server.routes = {DISCOVERY: slow_failure}
    provider = generic_oidc("d", "id", "secret", redirect_uri=CALLBACK, issuer=server.url)
    errors: list[BaseException] = []

    def use() -> None:
        try:
            provider.resolved()
        except OAuthDiscoveryError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert len(errors) == 4
    assert all("HTTP 503" in str(error) for error in errors)
    assert [seen.path for seen in server.seen] == [DISCOVERY]


# -- PROVIDERS as a factory, built on first use -----------------------------------------------------
FLAKY: dict[str, Any] = {"issuer": None, "calls": 0}


def flaky_providers() -> list[OAuthProvider]:
    """``OAUTH["PROVIDERS"]`` of the test below (an import string names it): a factory
    that reads the discovery document itself."""
    FLAKY["calls"] += 1
    return [
        generic_oidc(
            "flaky",
            "id",
            "secret",
            redirect_uri="http://testserver/auth/flaky/callback",
            issuer=FLAKY["issuer"],
            timeout=2,
        ).resolved()
    ]


def test_a_factory_whose_discovery_fails_is_502_and_is_tried_again_on_the_next_request(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FLAKY, "issuer", server.url)
    monkeypatch.setitem(FLAKY, "calls", 0)
    server.routes = {DISCOVERY: Answer(503, HTML_PAGE, "text/html")}  # the provider is down
    client = Client()
    with oauth_settings("tests.oauth.test_provider_errors.flaky_providers"):
        down = client.get("/auth/flaky/redirect", **JSON)
        assert FLAKY["calls"] == 1

        server.routes = {DISCOVERY: Answer(200, discovery_document(server.url))}  # back up
        up = client.get("/auth/flaky/redirect", **JSON)
        again = client.get("/auth/flaky/redirect", **JSON)

    assert down.status_code == 502
    document = problem(down)
    assert document["code"] == "oauth_provider_error"
    assert "discovery" in document["detail"]
    assert up.status_code == 302
    assert up["Location"].startswith(f"{server.url}/authorize?")
    assert again.status_code == 302
    # Built once it worked: the third request did not run discovery again.
    assert FLAKY["calls"] == 2
    assert [seen.path for seen in server.seen] == [DISCOVERY, DISCOVERY]


TWO_ISSUERS: dict[str, Any] = {"local": None, "other": None, "calls": 0}


def two_issuers() -> list[OAuthProvider]:
    """``OAUTH["PROVIDERS"]`` of the test below: the local provider, and another whose
    issuer may not be up."""
    TWO_ISSUERS["calls"] += 1
    return [
        generic_oidc(
            "local",
            DEFAULT_CLIENT_ID,
            DEFAULT_CLIENT_SECRET,
            redirect_uri=REDIRECT_URI,
            issuer=TWO_ISSUERS["local"],
        ),
        generic_oidc(
            "other",
            DEFAULT_CLIENT_ID,
            DEFAULT_CLIENT_SECRET,
            redirect_uri=OTHER_REDIRECT_URI,
            issuer=TWO_ISSUERS["other"],
            # A closed port is refused at once whatever the timeout; the issuer started
            # mid-test answers its first discovery slowly on a busy machine (it was 2 s,
            # and a loaded run missed it).
            timeout=15,
        ),
    ]


def test_an_unreachable_issuer_fails_only_its_provider_which_recovers_without_a_restart(
    local_idp: LocalIdp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = closed_port()
    monkeypatch.setitem(TWO_ISSUERS, "local", local_idp.issuer)
    monkeypatch.setitem(TWO_ISSUERS, "other", f"http://127.0.0.1:{port}/o")
    monkeypatch.setitem(TWO_ISSUERS, "calls", 0)
    with oauth_settings("tests.oauth.test_provider_errors.two_issuers"):
        down = Client().get("/auth/other/redirect", **JSON)
        # The reachable provider signs in meanwhile, before and after the other's failure.
        first = Client()
        first_done = sign_in(first)
        still_down = Client().get("/auth/other/redirect", **JSON)

        # The other issuer comes up, on the port that was closed.
        other_idp = start_local_idp(tmp_path / "other-idp", [OTHER_REDIRECT_URI], port=port)
        try:
            second = Client()
            second_done = sign_in(second, provider="other")
        finally:
            other_idp.stop()

    for response in (down, still_down):
        assert response.status_code == 502
        document = problem(response)
        assert document["code"] == "oauth_provider_error"
        assert "discovery" in document["detail"] and str(port) in document["detail"]
    assert first_done.status_code == 302, first_done.content
    assert session_user_id(first) is not None
    assert second_done.status_code == 302, second_done.content
    assert session_user_id(second) == session_user_id(first)  # alice, through either
    assert sorted(identities()) == [("local", "alice", ANY), ("other", "alice", ANY)]
    # No restart and no rebuild: the list was built once.
    assert TWO_ISSUERS["calls"] == 1
