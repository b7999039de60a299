"""Named setups and checks of the docs' samples (``<!-- sample: setup=... check=... -->``).

A setup is a generator: it receives the Run (its ``pytest_request`` reaches any pytest
fixture), may patch something for the duration, and yields the names it puts into the
sample's namespace. A check receives the Run once the sample ran (``run["name"]`` for
a name the sample left, ``run.value("source...")`` for an expression statement's value,
``run.namespace["text"]`` for a non-python block's text) and asserts what the sample
claims.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from tests.conftest import enable_totp
from tests.peer_server import PeerServer

from .samples import Run

Setup = Callable[[Run], Iterator[dict[str, Any]]]
Check = Callable[[Run], None]

SETUPS: dict[str, Setup] = {}
CHECKS: dict[str, Check] = {}


def setup(name: str) -> Callable[[Setup], Setup]:
    def register(func: Setup) -> Setup:
        SETUPS[name] = func
        return func

    return register


def check(name: str) -> Callable[[Check], Check]:
    def register(func: Check) -> Check:
        CHECKS[name] = func
        return func

    return register


@contextlib.contextmanager
def entered(names: list[str], run: Run) -> Iterator[None]:
    """The setups of a chain, each once, in order; their names go into the namespace."""
    with contextlib.ExitStack() as stack:
        for name in dict.fromkeys(names):
            values = stack.enter_context(contextlib.contextmanager(SETUPS[name])(run))
            run.namespace.update(values or {})
        yield


# -- setups -------------------------------------------------------------------------------


def _fixture(run: Run, name: str) -> Any:
    return run.pytest_request.getfixturevalue(name)


def session_request(method: str = "get", path: str = "/", **kwargs: Any) -> Any:
    """A RequestFactory request with a (signed-cookie) session and an anonymous user,
    as it is inside a view after the session and authentication middleware."""
    from django.contrib.auth.models import AnonymousUser
    from django.contrib.sessions.middleware import SessionMiddleware
    from django.http import HttpResponse
    from django.test import RequestFactory

    request = getattr(RequestFactory(), method)(path, **kwargs)
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    request.user = AnonymousUser()
    return request


def _user_names(run: Run) -> dict[str, Any]:
    user = _fixture(run, "user")
    return {"user": user, "email": user.email, "password": _fixture(run, "password")}


@setup("request")
def _request(run: Run) -> Iterator[dict[str, Any]]:
    """``request``: an anonymous GET with a session; ``user`` (saved, member of tenant 1),
    ``email`` and ``password``: that user's credentials."""
    names = _user_names(run)
    names["user"].tenants.add(1)
    yield {**names, "request": session_request()}


@setup("user")
def _user(run: Run) -> Iterator[dict[str, Any]]:
    """``user`` (saved), ``email`` and ``password``: that user's credentials."""
    yield _user_names(run)


@setup("signed_in")
def _signed_in(run: Run) -> Iterator[dict[str, Any]]:
    """``request`` signed in as ``user`` (session cookie login)."""
    from appframework.auth import login

    names = _user_names(run)
    request = session_request()
    login(request, names["user"])
    yield {**names, "request": request}


@setup("bearer")
def _bearer(run: Run) -> Iterator[dict[str, Any]]:
    """``request`` carrying ``Authorization: Bearer <a token of user>``."""
    from django.test import RequestFactory

    from appframework.auth import TokenManager

    names = _user_names(run)
    token = TokenManager().issue(names["user"])
    yield {
        **names,
        "request": RequestFactory().get("/api/me", HTTP_AUTHORIZATION=f"Bearer {token}"),
    }


@setup("post")
def _post(run: Run) -> Iterator[dict[str, Any]]:
    """``post``: a post of ``user`` in tenant 1."""
    from testproject.blog.models import Post

    yield {"post": Post.objects.create(title="Hello", body="First.", author=_fixture(run, "user"))}


@setup("fresh_gate")
def _fresh_gate(run: Run) -> Iterator[dict[str, Any]]:
    """An empty Gate in the container for the sample, so what it defines does not leak
    into the demo's Gate; the demo's comes back afterwards."""
    from appframework.authorization import Gate
    from appframework.container import container

    demo_gate = container.resolve(Gate)
    container.bind(Gate, Gate())
    try:
        yield {}
    finally:
        container.bind(Gate, demo_gate)


@setup("credentials")
def _credentials(run: Run) -> Iterator[dict[str, Any]]:
    """What settings read from the environment or a file in real life: OAuth client
    credentials and an IdP's certificate (a real one, made for the test)."""
    from testproject.local_idp.keys import make_keypair

    keys = make_keypair(_fixture(run, "tmp_path") / "keys", "idp", common_name="idp.corp.example")
    yield {
        "CLIENT_ID": "client-id",
        "CLIENT_SECRET": "client-secret",
        "ID": "client-id",
        "SECRET": "client-secret",
        "IDP_CERT_PEM": keys.cert_pem,
    }


DISCOVERY = {
    "issuer": "https://id.corp.example",
    "authorization_endpoint": "https://id.corp.example/authorize",
    "token_endpoint": "https://id.corp.example/token",
    "userinfo_endpoint": "https://id.corp.example/userinfo",
}


@setup("oidc_discovery")
def _oidc_discovery(run: Run) -> Iterator[dict[str, Any]]:
    """https://id.corp.example does not exist: its discovery document is answered here
    (everything else about the provider is built by the suite's own code)."""
    from unittest import mock

    from appframework.oauth import builders

    url = "https://id.corp.example/.well-known/openid-configuration"
    real = builders.ProviderClient.object

    def answer(self: Any, method: str, target: str, *args: Any, **kwargs: Any) -> Any:
        return dict(DISCOVERY) if target == url else real(self, method, target, *args, **kwargs)

    with mock.patch.object(builders.ProviderClient, "object", answer):
        yield {}


def _endpoint(event: str) -> Any:
    from appframework_webhooks import WebhookEndpoint

    return WebhookEndpoint.objects.create(
        url="https://hooks.example.com/orders", event=event, secret="endpoint-secret"
    )


class _QueuedJobs:
    """The deliveries a fire queues wait for the transaction to commit; the test's
    transaction never does (nothing is sent). They are counted on the connection."""

    def __init__(self) -> None:
        from django.db import connection

        self.start = len(connection.run_on_commit)

    def __len__(self) -> int:
        from django.db import connection

        return len(connection.run_on_commit) - self.start


@contextlib.contextmanager
def _queued_jobs(run: Run) -> Iterator[_QueuedJobs]:
    yield _QueuedJobs()


@setup("order_endpoint")
def _order_endpoint(run: Run) -> Iterator[dict[str, Any]]:
    """``order`` (pk 5) and an endpoint subscribed to ``order.shipped``; the jobs queued
    are kept in ``_jobs``."""
    from types import SimpleNamespace

    endpoint = _endpoint("order.shipped")
    with _queued_jobs(run) as jobs:
        yield {"order": SimpleNamespace(pk=5, carrier="DHL"), "_endpoint": endpoint, "_jobs": jobs}


@setup("registered_endpoint")
def _registered_endpoint(run: Run) -> Iterator[dict[str, Any]]:
    endpoint = _endpoint("user.registered")
    with _queued_jobs(run) as jobs:
        yield {"_endpoint": endpoint, "_jobs": jobs}


WEBHOOK_SECRET = "endpoint-secret"


def signed_delivery(event: str, data: dict[str, Any], secret: str) -> Any:
    """A webhook POST exactly as the suite sends it (its own headers and body), received."""
    import time

    from django.test import RequestFactory

    from appframework_webhooks.delivery import webhook_headers
    from appframework_webhooks.manager import serialize

    body = serialize(event, data).encode()
    headers = webhook_headers(event, body, secret, "d-1", int(time.time()))
    meta = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    meta.pop("HTTP_CONTENT_TYPE")
    return RequestFactory().post(
        "/webhooks/receiver", data=body, content_type=headers["Content-Type"], **meta
    )


@setup("webhook_request")
def _webhook_request(run: Run) -> Iterator[dict[str, Any]]:
    """``request``: a delivery of ``order.shipped`` as a receiver gets it; ``secret``."""
    yield {
        "secret": WEBHOOK_SECRET,
        "request": signed_delivery("order.shipped", {"id": 5}, WEBHOOK_SECRET),
    }


@setup("graphiql_assets")
def _graphiql_assets(run: Run) -> Iterator[dict[str, Any]]:
    """The four GraphiQL files in BASE_DIR/graphiql-assets (their content is not
    checked by the helper; the browser checks the pinned hashes)."""
    from django.test import override_settings

    from appframework_graphql.graphiql import LOCAL_FILES

    base_dir = _fixture(run, "tmp_path")
    directory = base_dir / "graphiql-assets"
    directory.mkdir(exist_ok=True)
    for name in LOCAL_FILES.values():
        (directory / name).write_text(f"/* {name} */\n", encoding="utf-8")
    with override_settings(BASE_DIR=base_dir):
        yield {}


@setup("shop_invoice")
def _shop_invoice(run: Run) -> Iterator[dict[str, Any]]:
    """The table ``shop_invoice`` with one row in tenant 1 and one in tenant 2 (dropped
    with the test's transaction)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE shop_invoice (id serial PRIMARY KEY, tenant_id bigint NOT NULL, "
            "number varchar(20) NOT NULL)"
        )
        cursor.execute("INSERT INTO shop_invoice (tenant_id, number) VALUES (1, 'A-1'), (2, 'G-1')")
    yield {}


# -- checks -------------------------------------------------------------------------------


def _resolves(urlpatterns: list[Any], path: str) -> Any:
    from django.urls import URLResolver
    from django.urls.resolvers import RegexPattern

    return URLResolver(RegexPattern(r"^/"), urlpatterns).resolve(path)


def _problem(request: Any, exc: Exception) -> tuple[int, dict[str, Any]]:
    """What the error mapping answers an API client for ``exc``."""
    import json

    from appframework.errors import app_error, response_for_error

    mapped = app_error(exc, log=False)
    assert mapped is not None, f"{exc!r} is not mapped to an error response"
    response = response_for_error(request, mapped)
    assert response["Content-Type"].startswith("application/problem+json")
    return response.status_code, json.loads(response.content)


def _api_request() -> Any:
    from django.test import RequestFactory

    return RequestFactory().get("/", HTTP_ACCEPT="application/json")


@check("quick_start")
def _quick_start(run: Run) -> None:
    """The quick start's commands are the repository's scripts, executable."""
    import os
    import re

    from .samples import ROOT

    commands = re.findall(r"^(\./\S+)", run["text"], re.MULTILINE)
    assert commands == ["./scripts/demo", "./scripts/test"], commands
    for command in commands:
        assert os.access(ROOT / command, os.X_OK), f"{command} is not an executable file"
    # The address the comment promises is the script's default.
    address = re.search(r"http://(\S+?)[\s)]", run["text"]).group(1)  # type: ignore[union-attr]
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    assert f"ADDR=${{1:-{address}}}" in demo, f"scripts/demo does not default to {address}"


@check("user_model")
def _user_model(run: Run) -> None:
    """The model is a working user model: the password goes to password_hash, and the
    session hash follows the password and the session version."""
    user_model = run["User"]
    assert user_model.USERNAME_FIELD == "email"
    assert user_model._meta.get_field("password_hash").max_length == 255
    user = user_model(email="a@example.com")
    user.set_password("correct horse")
    assert user.password_hash.startswith("pbkdf2_sha256$")
    assert user.check_password("correct horse") and not user.check_password("wrong")
    before = user.get_session_auth_hash()
    user.session_version += 1
    assert user.get_session_auth_hash() != before


@check("abstract_user_model")
def _abstract_user_model(run: Run) -> None:
    """An AbstractUser with the mixin: username login, the hash in Django's password
    column, AbstractUser's Meta kept, the session hash following the version."""
    from appframework.auth.mixins import password_field_of, username_field_of

    model = run["User"] if "User" in run.namespace else run["Member"]
    assert (username_field_of(model), password_field_of(model)) == ("username", "password")
    assert model._meta.verbose_name == "user"
    user = model(username="ada")
    user.set_password("correct horse")
    assert user.password.startswith("pbkdf2_sha256$")
    assert user.check_password("correct horse") and not user.check_password("wrong")
    before = user.get_session_auth_hash()
    user.session_version += 1
    assert user.get_session_auth_hash() != before


@check("mfa_model")
def _mfa_model(run: Run) -> None:
    meta = run["User"]._meta
    for name in ("mfa_secret", "mfa_enabled", "mfa_recovery_codes", "mfa_last_counter"):
        meta.get_field(name)
    assert not meta.get_field("mfa_secret").editable
    assert not meta.get_field("mfa_recovery_codes").editable


@check("logged_out")
def _logged_out(run: Run) -> None:
    from appframework.auth import current_user_sync

    assert run["user"].email == "alice@example.com"  # what attempt() returned
    assert run.value("await current_user(request)").pk == run["user"].pk
    assert current_user_sync(run["request"]) is None


@check("mfa_signed_in")
def _mfa_signed_in(run: Run) -> None:
    from appframework.auth import current_user_sync

    assert len(run["codes"]) == 10
    assert run.value("complete_challenge(").pk == run["user"].pk
    assert current_user_sync(run["request"]).pk == run["user"].pk


@check("oauth_providers")
def _oauth_providers(run: Run) -> None:
    providers = run["APPFRAMEWORK"]["OAUTH"]["PROVIDERS"]
    by_name = {p.name: p for p in providers}
    if "corp" in by_name:  # built from the discovery document
        assert by_name["corp"].authorize_url == DISCOVERY["authorization_endpoint"]
        assert by_name["corp"].issuer == DISCOVERY["issuer"]
    for name in by_name:
        match = _resolves(run["urlpatterns"], f"/auth/{name}/callback")
        assert match.kwargs == {"provider": name} or name in match.kwargs.values()
        _resolves(run["urlpatterns"], f"/auth/{name}/redirect")


@check("saml_provider")
def _saml_provider(run: Run) -> None:
    from appframework.saml import metadata_xml

    [provider] = run["APPFRAMEWORK"]["SAML"]["PROVIDERS"]
    # The SP metadata validates against the SAML schema (or raises).
    assert provider.acs_url in metadata_xml(provider)
    for path in ("login", "acs", "metadata"):
        _resolves(run["urlpatterns"], f"/saml/{provider.name}/{path}")


@check("api_tokens")
def _api_tokens(run: Run) -> None:
    from appframework.auth import TokenManager

    assert TokenManager().verify_sync(run["token"]) is None, "the revoked token still works"
    assert run["user"] is not None and run["user"].email == "alice@example.com"
    response_or_error = _call_view(run["api_view"], _api_request())
    assert response_or_error.status_code == 401
    assert response_or_error["WWW-Authenticate"].startswith("Bearer")


def _call_view(view: Any, request: Any) -> Any:
    """A view's answer as the error mapping would send it."""
    import inspect

    from asgiref.sync import async_to_sync

    from appframework.errors import app_error, response_for_error

    async def wait(awaitable: Any) -> Any:
        return await awaitable

    try:
        result = view(request)
        return async_to_sync(wait)(result) if inspect.isawaitable(result) else result
    except Exception as exc:
        mapped = app_error(exc, log=False)
        if mapped is None:
            raise
        return response_for_error(request, mapped)


@check("gate")
def _gate(run: Run) -> None:
    """What the sample defined decides: the author may delete the post, someone else may
    not, an anonymous request is a 401, and the before-hook lets superusers through."""
    import pytest
    from asgiref.sync import async_to_sync

    from appframework.auth import login
    from appframework.authorization import authorize_sync
    from appframework.exceptions import ForbiddenException, UnauthorizedException

    user, post, gate = run["user"], run["post"], run["gate"]
    assert run.value("authorize_sync(").pk == user.pk
    decision = run["decision"]
    assert decision.allowed and decision.source == "policy:PostPolicy.delete_post", decision
    assert list(run.value("gate.scope(")) == [post]
    with pytest.raises(UnauthorizedException):
        authorize_sync(session_request(), "delete-post", post)
    other = _fixture(run, "other_user")
    request = session_request()
    login(request, other)
    with pytest.raises(ForbiddenException):
        authorize_sync(request, "delete-post", post)
    # @authorized: the post is fetched by its URL id and handed to the view.
    seen = []
    view = run["authorized"]("delete-post", run["Post"])(lambda request, post: seen.append(post))
    view(run["request"], id=post.pk)
    assert seen == [post]
    assert run["delete"](run["request"], id=post.pk) is None  # the sample's view: `...`
    other.is_superuser = True
    assert async_to_sync(gate.allows)(other, "delete-post", post)


@check("blog_config")
def _blog_config(run: Run) -> None:
    from types import SimpleNamespace

    from appframework.authorization import Gate
    from appframework.container import container
    from testproject.blog.models import Post
    from testproject.blog.policies import PostPolicy

    run["BlogConfig"].ready(SimpleNamespace())
    gate = container.resolve(Gate)
    assert isinstance(gate.policy_for(Post), PostPolicy)
    assert gate.has("publish-post")
    superuser = SimpleNamespace(is_superuser=True, is_active=True, pk=99)
    assert gate.allows_sync(superuser, "anything at all")


@check("login_throttled_problem")
def _login_throttled_problem(run: Run) -> None:
    """The document is what the sixth failed sign-in really gets."""
    import json

    import pytest

    from appframework.auth import AuthManager
    from appframework.container import container
    from appframework.exceptions import TooManyRequestsException

    auth = container.resolve(AuthManager)
    request = _api_request()
    for _ in range(5):
        assert auth.attempt_sync("nobody@example.com", "wrong", request=request) is None
    with pytest.raises(TooManyRequestsException) as caught:
        auth.attempt_sync("nobody@example.com", "wrong", request=request)
    status, body = _problem(request, caught.value)
    assert status == 429
    assert body == json.loads(run["text"])


@check("not_author_problem")
def _not_author_problem(run: Run) -> None:
    status, body = _problem(_api_request(), run.exception)  # type: ignore[arg-type]
    assert (status, body["code"], body["detail"]) == (
        403,
        "not_author",
        "Only the author may edit this post.",
    )


@check("graphql_url")
def _graphql_url(run: Run) -> None:
    from appframework_graphql import views

    match = _resolves(run["urlpatterns"], "/graphql")
    assert match.func in (views.graphql_view, views.async_graphql_view) or "graphql" in (
        match.url_name or match.view_name
    )


@check("graphql_direct_calls")
def _graphql_direct_calls(run: Run) -> None:
    expected = {"data": {"hello": "Hello, world!"}}
    assert run.value("execute_graphql(") == expected
    assert run.value("await aexecute_graphql(") == expected


@check("graphiql_fetch_commands")
def _graphiql_fetch_commands(run: Run) -> None:
    """Not run (it downloads); its packages, versions and file paths are the pinned
    assets', so what it fetches is what the page's integrity hashes accept."""
    import re

    from appframework_graphql.graphiql import CDN_ASSETS, LOCAL_FILES

    text = run["text"]
    packed = set(re.findall(r"(\S+@\d+\.\d+\.\d+)", text.split("npm pack", 1)[1].splitlines()[0]))
    pinned = {
        re.search(r"unpkg\.com/(\S+@\d+\.\d+\.\d+)/", url).group(1)
        for url, _ in CDN_ASSETS.values()
    }  # type: ignore[union-attr]
    assert packed == pinned, (packed, pinned)
    for key, (url, _) in CDN_ASSETS.items():
        path_in_package = url.split("/", 4)[4]
        assert f"package/{path_in_package}" in text, f"{key}: {path_in_package} is not extracted"
        assert LOCAL_FILES[key] == path_in_package.rsplit("/", 1)[-1]


@check("graphiql_assets_pinned")
def _graphiql_assets_pinned(run: Run) -> None:
    from appframework_graphql.graphiql import CDN_ASSETS

    assets = run["APPFRAMEWORK"]["GRAPHQL"]["GRAPHIQL_ASSETS"]
    for key, (url, integrity) in CDN_ASSETS.items():
        assert assets[f"{key}_integrity"] == integrity, f"{key}: not the pinned hash"
        assert assets[key].endswith("/" + url.rsplit("/", 1)[1])


@check("graphiql_assets_served")
def _graphiql_assets_served(run: Run) -> None:
    from django.test import RequestFactory

    from appframework_graphql.graphiql import CDN_ASSETS

    assets = run["APPFRAMEWORK"]["GRAPHQL"]["GRAPHIQL_ASSETS"]
    for key in CDN_ASSETS:
        assert assets[f"{key}_integrity"] == CDN_ASSETS[key][1]
        match = _resolves(run["urlpatterns"], assets[key])
        response = match.func(RequestFactory().get(assets[key]), *match.args, **match.kwargs)
        assert response.status_code == 200
        content = b"".join(response.streaming_content) if response.streaming else response.content
        assert assets[key].rsplit("/", 1)[1].encode() in content


@check("mfa_login_view")
def _mfa_login_view(run: Run) -> None:

    from appframework.auth import current_user_sync
    from appframework.mfa import pending_user_id

    user, password = _fixture(run, "user"), _fixture(run, "password")
    view = run["login_view"]

    def post(password: str) -> tuple[Any, Any]:
        request = session_request(
            "post", "/login", data={"email": user.email, "password": password}
        )
        return request, view(request)

    request, response = post("wrong")
    assert response.url == "/login"
    request, response = post(password)
    assert response.url == "/" and current_user_sync(request).pk == user.pk
    enable_totp(user)
    request, response = post(password)
    assert response.url == "/login/mfa"
    assert current_user_sync(request) is None and pending_user_id(request) == user.pk


@check("oauth_start")
def _oauth_start(run: Run) -> None:
    from django.conf import settings
    from django.test import override_settings

    from appframework.oauth import google

    config = {
        **settings.APPFRAMEWORK,
        "OAUTH": {
            "PROVIDERS": [
                google("client-id", "client-secret", "https://example.com/auth/google/callback")
            ]
        },
    }
    with override_settings(APPFRAMEWORK=config):
        response = run["start"](run["request"], "google")
    assert response.status_code == 302
    assert response.url.startswith("https://accounts.google.com/")
    assert "state=" in response.url


@check("rate_limiter")
def _rate_limiter(run: Run) -> None:
    """The sample itself, run again: allowed up to the tenth hit in the window, the
    eleventh raises the 429."""
    import pytest

    from appframework.exceptions import TooManyRequestsException

    from .samples import execute

    assert run["result"].allowed and run["result"].limit == 10
    for _ in range(9):
        execute(run.block, run)
    with pytest.raises(TooManyRequestsException) as caught:
        execute(run.block, run)
    assert caught.value.status_code == 429 and caught.value.retry_after > 0


@check("csrf_protect_login")
def _csrf_protect_login(run: Run) -> None:
    """A POST to the decorated view without a token is refused even with no session
    cookie (the case the decorator exists for)."""
    from appframework.security import CsrfMiddleware

    view = run["login_view"]
    request = session_request("post", "/login", data={"email": "a@example.com"})
    request.META["HTTP_ACCEPT"] = "application/json"
    response = CsrfMiddleware(view).process_view(request, view, (), {})
    assert response is not None and response.status_code == 403
    assert b"csrf_" in response.content


@check("csrf_subclass")
def _csrf_subclass(run: Run) -> None:
    """The subclass exempts /hooks/ and leaves every other path to the suite's rules (a
    POST with a session cookie is checked)."""
    from django.conf import settings
    from django.http import HttpResponse

    middleware = run["MyCsrf"](lambda request: HttpResponse())

    def callback(request: Any) -> HttpResponse:
        return HttpResponse()

    for path, exempt in (("/hooks/payment", True), ("/posts", False)):
        request = session_request("post", path)
        request.COOKIES[settings.SESSION_COOKIE_NAME] = "a session"
        assert middleware.is_exempt(request, callback) is exempt, path


@check("tenant_resolver")
def _tenant_resolver(run: Run) -> None:
    import pytest

    from appframework.auth import login
    from appframework.exceptions import ForbiddenException

    resolve = run["resolve_tenant"]
    user = _fixture(run, "user")
    user.tenants.add(1, 2)
    assert resolve(session_request()) is None

    def signed_in(**headers: str) -> Any:
        request = session_request(**headers)
        login(request, user)
        return request

    assert resolve(signed_in()) == 1  # the user's first tenant
    assert resolve(signed_in(HTTP_X_TENANT="2")) == 2
    user.tenants.remove(2)
    for wanted in ("2", "abc"):
        with pytest.raises(ForbiddenException):
            resolve(signed_in(HTTP_X_TENANT=wanted))


@check("invoice_model")
def _invoice_model(run: Run) -> None:
    from appframework_tenancy import TenantManager

    invoice = run["Invoice"]
    assert invoice._meta.get_field("tenant_id")
    assert isinstance(invoice.objects, TenantManager)
    assert hasattr(invoice, "unscoped")


@check("row_level_security")
def _row_level_security(run: Run) -> None:
    """Applied for a role that is not a superuser, the policy shows a tenant its own
    rows only, and no row at all when no tenant is set."""
    import os

    from django.db import connection

    from appframework_tenancy import as_tenant
    from appframework_tenancy.postgres import rls_policy_sql, rls_tenant

    role = f"docs_rls_reader_{os.getpid()}"
    with connection.cursor() as cursor:
        for statement in rls_policy_sql("shop_invoice"):
            cursor.execute(statement)
        cursor.execute(f"CREATE ROLE {role} NOLOGIN")
        cursor.execute(f"GRANT SELECT ON shop_invoice TO {role}")
        cursor.execute(f"SET LOCAL ROLE {role}")
        try:
            counts = {}
            for tenant in (1, 2, None):
                with as_tenant(tenant), rls_tenant():
                    cursor.execute("SELECT number FROM shop_invoice")
                    counts[tenant] = [row[0] for row in cursor.fetchall()]
        finally:
            cursor.execute("RESET ROLE")
    assert counts == {1: ["A-1"], 2: ["G-1"], None: []}, counts


def _one_job_per_fire(run: Run, fires: int) -> None:
    jobs = run["_jobs"]
    assert len(jobs) == fires, f"{len(jobs)} deliveries queued, expected {fires}"


@check("webhooks_fired")
def _webhooks_fired(run: Run) -> None:
    """Each fire queues one delivery for the subscribed endpoint; the README's receiver
    line verifies the delivery's real signature."""
    # What fire_webhook / fire / fire_sync return: the delivery ids, one per endpoint.
    fired = [v for (_, _, _, v) in run.values if isinstance(v, list)]
    assert fired, "the sample fired nothing"
    for ids in fired:
        assert len(ids) == 1 and isinstance(ids[0], str), ids
    calls = len(fired)
    for name in ("ship", "ship_from_a_script"):
        if name in run.namespace:
            args = (run["order"],) if name == "ship_from_a_script" else (None, run["order"])
            ids = run[name](*args)
            calls += 1
            assert ids is None  # the sample's functions return nothing; the jobs count
    _one_job_per_fire(run, calls)


@check("user_registered_fired")
def _user_registered_fired(run: Run) -> None:
    _one_job_per_fire(run, 1)


@check("order_shipped_signal")
def _order_shipped_signal(run: Run) -> None:
    run["order_shipped"].send(sender=None, order=run["order"])
    _one_job_per_fire(run, 1)


@check("webhook_request")
def _webhook_request(run: Run) -> None:
    """A real delivery (to a listener on 127.0.0.1) has the documented request line,
    headers and body, byte for byte where the page gives them."""
    import re
    import threading
    from http.server import BaseHTTPRequestHandler

    from django.conf import settings
    from django.test import override_settings

    from appframework_webhooks.delivery import deliver_once
    from appframework_webhooks.manager import serialize
    from appframework_webhooks.signing import sign, sign_v2

    got: dict[str, Any] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got["line"] = self.requestline
            got["headers"] = dict(self.headers.items())
            got["body"] = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = PeerServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    config = {**settings.APPFRAMEWORK, "WEBHOOKS": {"ALLOWED_NETWORKS": ["127.0.0.0/8"]}}
    try:
        with override_settings(APPFRAMEWORK=config):
            body = serialize("order.shipped", {"id": 5}).encode()
            result = deliver_once(url, "order.shipped", body, WEBHOOK_SECRET, "d-42")
    finally:
        server.shutdown()
        server.server_close()
    assert result.success, result.error
    text = run["text"]
    head, _, documented_body = text.partition("\n\n")
    assert got["line"].startswith("POST /hook ")
    assert got["body"] == documented_body.strip().encode()
    headers = got["headers"]
    documented = dict(line.split(": ", 1) for line in head.splitlines()[1:] if ": " in line)
    for name, value in documented.items():
        assert name in headers, f"{name} is not sent"
        if not value.startswith(("<", "v2=<", "v1,<")):
            assert headers[name] == value, (name, headers[name])
    assert headers["X-Webhook-Id"] == "d-42"
    assert headers["X-Webhook-Signature"] == sign(WEBHOOK_SECRET, body)
    stamp = int(headers["X-Webhook-Timestamp"])
    assert headers["X-Webhook-Signature-V2"] == sign_v2(WEBHOOK_SECRET, "d-42", stamp, body)
    assert re.fullmatch(r"v2=[0-9a-f]{64}", headers["X-Webhook-Signature-V2"])
    assert re.fullmatch(r"[0-9a-f]{64}", headers["X-Webhook-Signature"])
    # The Standard Webhooks set, as the reference library verifies it.
    import standardwebhooks

    from appframework_webhooks import whsec

    assert headers["webhook-id"] == "d-42"
    assert headers["webhook-timestamp"] == headers["X-Webhook-Timestamp"]
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]{43}=", headers["webhook-signature"])
    standardwebhooks.Webhook(whsec(WEBHOOK_SECRET)).verify(body, headers)


@check("catalogue_declared")
def _catalogue_declared(run: Run) -> None:
    """The AppConfig's events are what the catalogue reads (its checks accept them)."""
    from appframework_webhooks import EventCatalogue

    catalogue = EventCatalogue()
    catalogue._loaded = True  # an empty catalogue, not read from the installed apps
    catalogue.register(*run["ShopConfig"].webhook_events)
    assert catalogue.names() == ["order.shipped"]
    assert catalogue.matching("order.*") == ["order.shipped"]
    assert catalogue.check_pattern("order.*") == "order.*"


@setup("drf_models")
def _drf_models(run: Run) -> Iterator[dict[str, Any]]:
    """``Post`` and the demo's ``PostSerializer`` (docs/drf.md)."""
    from testproject.blog.api_drf import PostSerializer
    from testproject.blog.models import Post

    yield {"Post": Post, "PostSerializer": PostSerializer}


def _signed_in_member(run: Run) -> tuple[Any, str]:
    """A browser signed in as ``user`` (a member of tenant 1) and its CSRF token."""
    from django.test import Client

    user = _fixture(run, "user")
    user.tenants.add(1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user, backend="appframework.auth.AuthManager")
    from tests.conftest import csrf_cookie

    return client, csrf_cookie(client)


@check("drf_validation_problem")
def _drf_validation_problem(run: Run) -> None:
    """The document is what an empty title posted to the demo's DRF API gets."""
    import json

    client, token = _signed_in_member(run)
    response = client.post(
        "/api/drf/posts/", {"title": ""}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == json.loads(run["text"])


@check("ninja_validation_problem")
def _ninja_validation_problem(run: Run) -> None:
    """The document is what a post without a title gets from the demo's ninja API."""
    import json

    client, token = _signed_in_member(run)
    response = client.post(
        "/api/ninja/posts", {"body": "no title"}, content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == json.loads(run["text"])
