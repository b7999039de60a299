"""``tenant_resolver(...)``: the header, the session's choice, the subdomain, the first
membership and the public tenant, in that order; ``select_tenant``; the abstract tenant
and membership it reads (the lab's Organisation/Membership); the resolver configured in
docs/tenancy.md; and the factory's resolver under ASGI."""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, models, transaction
from django.http import HttpRequest, HttpResponse
from django.test import AsyncClient, Client, RequestFactory, override_settings
from django.test.utils import isolate_apps

from appframework.auth import login
from appframework.exceptions import ForbiddenException, UnauthorizedException
from appframework_tenancy import AbstractMembership, AbstractTenant, current_tenant_id
from appframework_tenancy.resolvers import TenantResolver, select_tenant, tenant_resolver
from tests.conftest import login_client
from tests.tenancy.lab.models import Membership, Organisation
from tests.tenancy.resolver_urls import PUBLIC, resolve_tenant
from tests.tenancy.test_context import async_db, bearer, tenancy_settings

pytestmark = pytest.mark.django_db

__all__ = ["async_db"]  # a fixture of the ASGI test, imported

ACME, GLOBEX, INITECH = 11, 12, 13
ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "application/problem+json"


@pytest.fixture
def orgs(db: Any) -> dict[str, Organisation]:
    """The lab's tenants: public (the public tenant), acme, globex, initech."""
    return {
        slug: Organisation.objects.create(id=pk, name=slug.title(), slug=slug)
        for slug, pk in (
            ("public", PUBLIC),
            ("acme", ACME),
            ("globex", GLOBEX),
            ("initech", INITECH),
        )
    }


@pytest.fixture
def member(orgs: dict[str, Organisation], user: Any) -> Any:
    """``user``: a member of Globex (their oldest membership, though its tenant id and
    its row's id are the larger) and Acme; not of Initech."""
    Membership.objects.create(user=user, tenant=orgs["acme"])
    globex = Membership.objects.create(user=user, tenant=orgs["globex"])
    Membership.objects.filter(pk=globex.pk).update(
        created_at=globex.created_at - datetime.timedelta(days=30)
    )
    return user


def request_for(
    user: Any = None, *, cookie: str | None = None, host: str = "testserver", **headers: str
) -> HttpRequest:
    """A GET as the resolver sees it: after the session and authentication middleware,
    with ``cookie`` as its session cookie, signed in as ``user`` when given."""
    request = RequestFactory().get("/", headers=headers, HTTP_HOST=host)
    if cookie is not None:
        request.COOKIES[settings.SESSION_COOKIE_NAME] = cookie
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    AuthenticationMiddleware(lambda r: HttpResponse()).process_request(request)
    if user is not None:
        login(request, user)
    return request


def session_cookie(user: Any, **data: Any) -> str:
    """A signed-in browser's session cookie, holding ``data`` too."""
    request = request_for(user)
    request.session.update(data)
    request.session.save()
    return str(request.session.session_key)


def token(user: Any) -> str:
    return bearer(user)["Authorization"]


def forbidden(call: Any) -> ForbiddenException:
    with pytest.raises(ForbiddenException) as caught:
        call()
    assert caught.value.code == "tenant_not_member"
    return caught.value


# -- the header ------------------------------------------------------------------------------
def test_a_header_naming_a_tenant_of_the_user_resolves_to_that_tenant(member: Any) -> None:
    assert resolve_tenant(request_for(member, **{"X-Tenant": str(ACME)})) == ACME
    assert resolve_tenant(request_for(member, **{"X-Tenant": str(GLOBEX)})) == GLOBEX


def test_a_header_naming_a_tenant_the_user_is_not_a_member_of_is_a_403_tenant_not_member(
    member: Any,
) -> None:
    forbidden(lambda: resolve_tenant(request_for(member, **{"X-Tenant": str(INITECH)})))


@pytest.mark.parametrize("value", ["404", "acme", "", " 11", "11.0", "+11", "0x0b", "\u0661\u0661"])
def test_a_header_that_names_no_tenant_of_the_user_is_the_same_403(member: Any, value: str) -> None:
    """A tenant that does not exist and a value that is no tenant id get the one answer:
    it never tells which tenants exist."""
    forbidden(lambda: resolve_tenant(request_for(member, **{"X-Tenant": value})))


def test_the_resolved_id_is_the_memberships_value_never_the_clients_text(member: Any) -> None:
    resolved = resolve_tenant(request_for(member, **{"X-Tenant": str(ACME)}))
    assert type(resolved) is int


def test_the_header_wins_over_the_session_choice(member: Any) -> None:
    cookie = session_cookie(member, tenant_id=GLOBEX)
    assert resolve_tenant(request_for(cookie=cookie, **{"X-Tenant": str(ACME)})) == ACME


def test_a_bearer_request_with_the_header_resolves_to_a_tenant_of_the_tokens_user(
    member: Any,
) -> None:
    headers = {"Authorization": token(member)}
    assert resolve_tenant(request_for(**headers, **{"X-Tenant": str(ACME)})) == ACME
    forbidden(lambda: resolve_tenant(request_for(**headers, **{"X-Tenant": str(INITECH)})))


def test_with_the_header_source_off_the_header_is_ignored(member: Any) -> None:
    resolver = tenant_resolver(member_tenant_ids=Membership, header=None)
    assert resolver(request_for(member, **{"X-Tenant": str(INITECH)})) == GLOBEX


# -- the session's choice --------------------------------------------------------------------
def test_the_session_choice_of_a_member_resolves_to_that_tenant(member: Any) -> None:
    assert resolve_tenant(request_for(cookie=session_cookie(member, tenant_id=ACME))) == ACME


def test_a_session_choice_the_user_lost_the_membership_of_falls_back_and_is_forgotten(
    member: Any,
) -> None:
    cookie = session_cookie(member, tenant_id=ACME)
    Membership.objects.filter(user=member, tenant_id=ACME).delete()
    request = request_for(cookie=cookie)
    assert resolve_tenant(request) == GLOBEX
    assert "tenant_id" not in request.session
    assert request.session.modified  # so the cookie without the choice is sent back


def test_a_session_choice_that_is_no_tenant_id_is_forgotten(member: Any) -> None:
    request = request_for(cookie=session_cookie(member, tenant_id=True))
    assert resolve_tenant(request) == GLOBEX
    assert "tenant_id" not in request.session


def test_a_bearer_request_never_reads_the_session_its_cookie_carries(member: Any) -> None:
    cookie = session_cookie(member, tenant_id=ACME)
    request = request_for(cookie=cookie, Authorization=token(member))
    assert resolve_tenant(request) == GLOBEX  # the token user's first tenant, not the choice
    assert request.session.accessed is False


def test_with_the_session_source_off_the_choice_is_ignored(member: Any) -> None:
    resolver = tenant_resolver(member_tenant_ids=Membership, session_key=None)
    request = request_for(cookie=session_cookie(member, tenant_id=ACME))
    assert resolver(request) == GLOBEX


# -- the subdomain ---------------------------------------------------------------------------
@pytest.fixture
def example_hosts() -> Iterator[None]:
    with override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, ".example.com", "10.0.0.7"]):
        yield


def test_a_subdomain_of_a_tenant_of_the_user_resolves_to_that_tenant(
    member: Any, example_hosts: None
) -> None:
    assert resolve_tenant(request_for(member, host="acme.example.com")) == ACME
    assert resolve_tenant(request_for(member, host="ACME.example.com:8443")) == ACME


def test_a_subdomain_of_a_tenant_the_user_is_not_a_member_of_is_a_403(
    member: Any, example_hosts: None
) -> None:
    forbidden(lambda: resolve_tenant(request_for(member, host="initech.example.com")))


@pytest.mark.parametrize(
    "host", ["example.com", "www.example.com", "x.acme.example.com", "acme.example.org", "10.0.0.7"]
)
def test_a_host_that_names_no_tenant_falls_back_to_the_first_membership(
    member: Any, example_hosts: None, host: str
) -> None:
    with override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, host]):
        assert resolve_tenant(request_for(member, host=host)) == GLOBEX


def test_subdomain_true_reads_the_first_label_of_a_host_of_three_labels_or_more(
    member: Any, example_hosts: None
) -> None:
    resolver = tenant_resolver(member_tenant_ids=Membership, subdomain=True)
    with override_settings(ALLOWED_HOSTS=["*"]):
        assert resolver(request_for(member, host="acme.example.co.uk")) == ACME
        assert resolver(request_for(member, host="acme.localhost")) == GLOBEX
        forbidden(lambda: resolver(request_for(member, host="initech.example.net")))


def test_the_session_choice_comes_before_the_subdomain(member: Any, example_hosts: None) -> None:
    cookie = session_cookie(member, tenant_id=GLOBEX)
    assert resolve_tenant(request_for(cookie=cookie, host="acme.example.com")) == GLOBEX


def test_a_bearer_request_reads_the_subdomain(member: Any, example_hosts: None) -> None:
    request = request_for(host="acme.example.com", Authorization=token(member))
    assert resolve_tenant(request) == ACME


def test_the_subdomain_is_looked_up_in_the_tenant_model_given(
    member: Any, example_hosts: None
) -> None:
    resolver = tenant_resolver(
        member_tenant_ids=lambda user: [ACME, GLOBEX],
        subdomain="example.com",
        tenant_model="tenancy_lab.Organisation",
    )
    assert resolver(request_for(member, host="globex.example.com")) == GLOBEX


# -- the first membership, the public tenant ---------------------------------------------------
def test_without_a_claim_a_user_gets_their_oldest_membership(member: Any) -> None:
    assert resolve_tenant(request_for(member)) == GLOBEX
    assert resolve_tenant(request_for(Authorization=token(member))) == GLOBEX


def test_a_user_with_no_membership_gets_the_public_tenant(orgs: Any, other_user: Any) -> None:
    assert resolve_tenant(request_for(other_user)) == PUBLIC


def test_an_anonymous_request_gets_the_public_tenant_whatever_it_claims(
    member: Any, example_hosts: None
) -> None:
    cookie = session_cookie(member, tenant_id=ACME)
    anonymous = request_for(
        cookie="tampered" + cookie, host="acme.example.com", **{"X-Tenant": "11"}
    )
    assert resolve_tenant(anonymous) == PUBLIC
    invalid_token = request_for(Authorization="Bearer not-a-token", **{"X-Tenant": "11"})
    assert resolve_tenant(invalid_token) == PUBLIC


def test_the_public_tenant_defaults_to_no_tenant(member: Any) -> None:
    assert tenant_resolver(member_tenant_ids=Membership)(request_for()) is None


def test_member_tenant_ids_may_be_a_function_of_the_user(member: Any) -> None:
    """The demo's shape: memberships kept some other way (a many-to-many)."""
    resolver = tenant_resolver(member_tenant_ids=lambda user: [INITECH, ACME])
    assert resolver(request_for(member)) == INITECH
    assert resolver(request_for(member, **{"X-Tenant": str(ACME)})) == ACME
    forbidden(lambda: resolver(request_for(member, **{"X-Tenant": str(GLOBEX)})))


# -- select_tenant ---------------------------------------------------------------------------
@pytest.fixture
def stack(demo_stack: None) -> Iterator[None]:
    """The demo's middleware with the lab's resolver and views (tests/tenancy/resolver_urls.py)."""
    with override_settings(
        ROOT_URLCONF="tests.tenancy.resolver_urls",
        APPFRAMEWORK=tenancy_settings(RESOLVER="tests.tenancy.resolver_urls.resolve_tenant"),
        ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, ".example.com"],
    ):
        yield


def test_select_tenant_stores_a_tenant_of_the_user_as_the_session_choice(
    member: Any, stack: None
) -> None:
    request = request_for(member)
    assert select_tenant(request, str(ACME)) == ACME
    assert request.session["tenant_id"] == ACME
    assert resolve_tenant(request) == ACME


def test_select_tenant_refuses_a_tenant_the_user_is_not_a_member_of_and_keeps_the_choice(
    member: Any, stack: None
) -> None:
    request = request_for(member)
    select_tenant(request, ACME)
    for claim in (INITECH, 404, "acme", None):
        forbidden(lambda claim=claim: select_tenant(request, claim))
    assert request.session["tenant_id"] == ACME


def test_select_tenant_without_a_signed_in_session_is_a_401(member: Any, stack: None) -> None:
    with pytest.raises(UnauthorizedException):
        select_tenant(request_for(), ACME)
    token_request = request_for(Authorization=token(member))
    with pytest.raises(UnauthorizedException):
        select_tenant(token_request, ACME)
    assert token_request.session.accessed is False


def test_select_tenant_needs_the_configured_resolver_to_come_from_tenant_resolver(
    member: Any, stack: None
) -> None:
    lab = tenancy_settings(RESOLVER="tests.tenancy.stream_urls.resolve_lab_tenant")
    with override_settings(APPFRAMEWORK=lab), pytest.raises(ImproperlyConfigured):
        select_tenant(request_for(member), ACME)
    no_session = tenant_resolver(member_tenant_ids=Membership, session_key=None)
    with pytest.raises(ImproperlyConfigured):
        no_session.select(request_for(member), ACME)


# -- through the middleware ------------------------------------------------------------------
def test_a_switch_then_requests_run_under_the_chosen_tenant(member: Any, stack: None) -> None:
    client = login_client(Client(), member)
    assert client.get("/lab/tenant").json() == {"tenant": GLOBEX}
    assert client.post("/lab/select", {"tenant": ACME}).json() == {"selected": ACME}
    assert client.get("/lab/tenant").json() == {"tenant": ACME}


def test_a_header_for_a_tenant_the_user_is_not_a_member_of_is_a_403_problem(
    member: Any, stack: None
) -> None:
    client = login_client(Client(), member)
    response = client.get(
        "/lab/tenant", headers={"X-Tenant": str(INITECH), "Accept": "application/json"}
    )
    assert response.status_code == 403
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "tenant_not_member"


def test_a_lost_session_choice_is_forgotten_in_the_cookie_sent_back(
    member: Any, stack: None
) -> None:
    client = login_client(Client(), member)
    client.post("/lab/select", {"tenant": ACME})
    Membership.objects.filter(user=member, tenant_id=ACME).delete()
    response = client.get("/lab/tenant")
    assert response.json() == {"tenant": GLOBEX}
    assert settings.SESSION_COOKIE_NAME in response.cookies
    Membership.objects.create(user=member, tenant_id=ACME)
    assert client.get("/lab/tenant").json() == {"tenant": GLOBEX}  # the choice is gone


def test_a_bearer_request_beside_a_session_cookie_does_not_read_the_session(
    member: Any, stack: None
) -> None:
    """The cookie holds a choice the user lost: had the session been read, the choice
    would have been forgotten and a new cookie sent."""
    client = login_client(Client(), member)
    client.post("/lab/select", {"tenant": ACME})
    Membership.objects.filter(user=member, tenant_id=ACME).delete()
    response = client.get("/lab/tenant", headers={"Authorization": token(member)})
    assert response.json() == {"tenant": GLOBEX}
    assert settings.SESSION_COOKIE_NAME not in response.cookies
    Membership.objects.create(user=member, tenant_id=ACME)
    assert client.get("/lab/tenant").json() == {"tenant": ACME}  # the choice is still there


def test_a_subdomain_request_runs_under_that_tenant(member: Any, stack: None) -> None:
    client = login_client(Client(), member)
    assert client.get("/lab/tenant", HTTP_HOST="acme.example.com").json() == {"tenant": ACME}
    refused = client.get(
        "/lab/tenant", HTTP_HOST="initech.example.com", headers={"Accept": "application/json"}
    )
    assert refused.status_code == 403


@pytest.mark.django_db(transaction=True)
async def test_under_asgi_the_middleware_resolves_through_the_factory_resolver(
    async_db: None, member: Any, stack: None
) -> None:
    client = AsyncClient()
    headers = await sync_to_async(bearer)(member)
    assert (await client.get("/lab/tenant", headers=headers)).json() == {"tenant": GLOBEX}
    chosen = await client.get("/lab/tenant", headers={**headers, "X-Tenant": str(ACME)})
    assert chosen.json() == {"tenant": ACME}
    refused = await client.get(
        "/lab/tenant",
        headers={**headers, "X-Tenant": str(INITECH), "Accept": "application/json"},
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == "tenant_not_member"
    assert (await client.get("/lab/tenant")).json() == {"tenant": PUBLIC}
    browser = AsyncClient()
    await browser.aforce_login(member, backend="appframework.auth.AuthManager")
    assert (await browser.post("/lab/select", {"tenant": ACME})).json() == {"selected": ACME}
    assert (await browser.get("/lab/tenant")).json() == {"tenant": ACME}
    assert current_tenant_id() is None


# -- configuration ---------------------------------------------------------------------------
def test_a_misconfigured_factory_says_so() -> None:
    with pytest.raises(TypeError):
        tenant_resolver(member_tenant_ids=5)  # type: ignore[arg-type]
    with pytest.raises(ImproperlyConfigured, match="tenant_model="):
        tenant_resolver(member_tenant_ids=lambda user: [], subdomain=True)
    unknown = tenant_resolver(member_tenant_ids="shop.Membership")
    with pytest.raises(ImproperlyConfigured, match=r"shop\.Membership"):
        unknown.member_tenant_ids(None)


def test_the_package_and_the_factory_import_and_build_before_django_setup() -> None:
    """A project's resolver module may be imported before the app registry is ready."""
    code = (
        "import appframework_tenancy\n"
        "from appframework_tenancy.resolvers import tenant_resolver\n"
        "from appframework_tenancy.operations import BackfillTenant\n"
        "tenant_resolver(member_tenant_ids='shop.Membership', subdomain='example.com')\n"
        "BackfillTenant('invoice', tenant=1)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_resolver_is_a_plain_sync_callable_for_the_middleware() -> None:
    from asgiref.sync import iscoroutinefunction

    assert isinstance(resolve_tenant, TenantResolver)
    assert callable(resolve_tenant) and not iscoroutinefunction(resolve_tenant)


# -- the abstract pair -----------------------------------------------------------------------
def test_a_user_is_a_member_of_a_tenant_once(member: Any, orgs: dict[str, Organisation]) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(user=member, tenant=orgs["acme"])


def test_a_tenant_slug_is_unique(orgs: dict[str, Organisation]) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Organisation.objects.create(name="Acme again", slug="acme")


def test_the_abstract_pair_declares_name_slug_user_created_at_and_the_unique_pair() -> None:
    assert [f.name for f in Organisation._meta.local_fields] == ["id", "name", "slug"]
    assert {f.name for f in Membership._meta.local_fields} == {"id", "user", "tenant", "created_at"}
    assert Membership._meta.get_field("user").related_model._meta.label == settings.AUTH_USER_MODEL
    (unique,) = Membership._meta.constraints
    assert (unique.fields, unique.name) == (
        ("user", "tenant"),
        "tenancy_lab_membership_unique_user_tenant",
    )
    assert str(Organisation(name="Acme")) == "Acme"


def test_a_membership_model_that_forgets_its_tenant_foreign_key_fails_the_system_checks() -> None:
    with isolate_apps("tests.tenancy.lab"):

        class TenantlessMembership(AbstractMembership):
            class Meta(AbstractMembership.Meta):
                app_label = "tenancy_lab"

        ids = {message.id for message in TenantlessMembership.check(databases=["default"])}
    assert "models.E012" in ids  # the unique constraint names a field that is missing


def test_a_membership_model_with_its_own_meta_keeps_the_unique_pair_only_by_inheriting_it() -> None:
    """Django's rule for abstract models: a Meta of the subclass's own replaces the
    abstract one, constraints included, unless it subclasses it (docs/tenancy.md)."""
    with isolate_apps("tests.tenancy.lab"):

        class Team(AbstractTenant):
            class Meta:
                app_label = "tenancy_lab"

        class TeamMembership(AbstractMembership):
            tenant = models.ForeignKey(Team, on_delete=models.CASCADE)

            class Meta(AbstractMembership.Meta):
                app_label = "tenancy_lab"
                verbose_name = "team membership"

        class PlainMetaMembership(AbstractMembership):
            tenant = models.ForeignKey(Team, on_delete=models.CASCADE)

            class Meta:
                app_label = "tenancy_lab"

        assert PlainMetaMembership._meta.constraints == []
        (unique,) = TeamMembership._meta.constraints
        assert unique.name == "tenancy_lab_teammembership_unique_user_tenant"
        assert TeamMembership._meta.verbose_name == "team membership"
        # fields.E300: the user model is not in this isolated registry, only in the real one.
        messages = TeamMembership.check(databases=["default"])
        assert {message.id for message in messages} == {"fields.E300"}


# -- the docs --------------------------------------------------------------------------------
def test_the_resolver_configured_in_the_docs_resolves_as_the_docs_say(
    member: Any, example_hosts: None
) -> None:
    """docs/tenancy.md's resolver module, with its ``shop.Membership`` pointed at the
    lab's membership model."""
    text = (ROOT / "docs" / "tenancy.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    (source,) = [b for b in blocks if "tenant_resolver(" in b and '"shop.Membership"' in b]
    namespace: dict[str, Any] = {}
    exec(source.replace('"shop.Membership"', '"tenancy_lab.Membership"'), namespace)
    resolver = namespace["resolve_tenant"]
    assert resolver(request_for(member, **{"X-Tenant": str(ACME)})) == ACME
    forbidden(lambda: resolver(request_for(member, **{"X-Tenant": str(INITECH)})))
    assert resolver(request_for(member)) == GLOBEX
    assert resolver(request_for()) is None
