"""The common tenant resolver as configuration: ``tenant_resolver(...)`` builds it.

The user is the session's or the bearer token's. Sources, the first that answers wins:

1. the header (``X-Tenant``), for API calls: a claim, checked against the user's
   memberships; anything else (another tenant, a non-number) is a 403
   ``tenant_not_member``;
2. the session's choice, stored by :func:`select_tenant`: a preference, so a choice the
   user lost the membership of is forgotten and the next source answers (a user who was
   removed from a tenant must still reach the switch page and sign out). Never read for a
   request carrying ``Authorization``: a token request is judged by the token alone;
3. the subdomain (``acme.example.com`` → the tenant whose slug is ``acme``), when
   enabled: a claim like the header for a tenant that exists; a host of no tenant
   (``www``) is no claim;
4. the user's first membership;
5. ``public_tenant`` (None: no tenant), which anonymous requests always get: nothing
   they claim can be checked.

Importing this module needs no app registry: models are looked up on first use.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.http import HttpRequest
from django.http.request import split_domain_port
from django.utils.translation import gettext_lazy as _

from appframework.exceptions import ForbiddenException

__all__ = [
    "TenantResolver",
    "request_user",
    "require_member",
    "select_tenant",
    "tenant_resolver",
]

MemberTenantIds = Callable[[Any], Iterable[Any]]


def request_user(request: HttpRequest) -> Any | None:
    """The session's user, else the bearer token's (the session is not read for a
    request carrying ``Authorization``), else None."""
    from appframework.auth import current_api_user_sync, current_user_sync

    return current_user_sync(request) or current_api_user_sync(request)


def _member(claim: Any, members: Sequence[Any]) -> Any | None:
    # Compared as text: a header, a host or a session holds "5" for the column's 5, and a
    # project with UUID tenants works unchanged. The member's own value is returned, so
    # nothing the client sent ever becomes the tenant id.
    if claim is None or isinstance(claim, bool):
        return None
    text = str(claim)
    return next((member for member in members if str(member) == text), None)


def require_member(claim: Any, members: Sequence[Any]) -> Any:
    """The member tenant id ``claim`` names; a 403 ``tenant_not_member`` otherwise (a
    tenant that does not exist and a value that is no tenant id included: the answer
    never tells which tenants exist)."""
    member = _member(claim, members)
    if member is None:
        raise ForbiddenException(
            _("You are not a member of this tenant."), code="tenant_not_member"
        )
    return member


def _model(value: Any, what: str) -> type[models.Model]:
    if isinstance(value, str):
        try:
            return apps.get_model(value)
        except (LookupError, ValueError) as exc:
            raise ImproperlyConfigured(f"tenant_resolver(): {what} {value!r}: {exc}") from None
    return value


def _is_model(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, type) and issubclass(value, models.Model))


class TenantResolver:
    """``resolver(request) -> tenant id or None``, made by :func:`tenant_resolver`."""

    def __init__(
        self,
        *,
        member_tenant_ids: MemberTenantIds | type[models.Model] | str,
        header: str | None = "X-Tenant",
        session_key: str | None = "tenant_id",
        subdomain: bool | str = False,
        public_tenant: Any = None,
        tenant_model: type[models.Model] | str | None = None,
    ) -> None:
        if not _is_model(member_tenant_ids) and not callable(member_tenant_ids):
            raise TypeError(
                "member_tenant_ids: a function user -> tenant ids, or the membership model."
            )
        if subdomain and tenant_model is None and not _is_model(member_tenant_ids):
            raise ImproperlyConfigured(
                "tenant_resolver(subdomain=...) looks tenants up by slug: pass "
                "tenant_model=, or the membership model as member_tenant_ids."
            )
        self._members_source = member_tenant_ids
        # Kept apart from the model form: a model class is callable too.
        self._members_function: MemberTenantIds | None = (
            None if _is_model(member_tenant_ids) else member_tenant_ids  # type: ignore[assignment]
        )
        self._tenant_model_source = tenant_model
        self.header = header
        self.session_key = session_key
        self.subdomain = subdomain.lower().strip(".") if isinstance(subdomain, str) else subdomain
        self.public_tenant = public_tenant

    def __repr__(self) -> str:
        return (
            f"tenant_resolver(member_tenant_ids={self._members_source!r}, "
            f"header={self.header!r}, session_key={self.session_key!r}, "
            f"subdomain={self.subdomain!r}, public_tenant={self.public_tenant!r})"
        )

    # -- the pieces ---------------------------------------------------------------------------
    def member_tenant_ids(self, user: Any) -> list[Any]:
        """The tenant ids ``user`` is a member of, their first membership first."""
        if self._members_function is not None:
            return list(self._members_function(user))
        model = _model(self._members_source, "member_tenant_ids")
        return list(
            model._default_manager.filter(user=user)
            # The oldest membership first: a user invited into other tenants later
            # keeps landing in their own.
            .order_by("created_at", "pk")
            .values_list("tenant_id", flat=True)
        )

    def tenant_model(self) -> type[models.Model]:
        if self._tenant_model_source is not None:
            return _model(self._tenant_model_source, "tenant_model")
        membership = _model(self._members_source, "member_tenant_ids")
        related = membership._meta.get_field("tenant").related_model
        return related  # type: ignore[return-value]

    def subdomain_slug(self, request: HttpRequest) -> str | None:
        """The tenant slug the host names: ``acme`` for ``acme.example.com``. With
        ``subdomain="example.com"`` only a label directly under that domain counts; with
        ``True``, the first label of a host of three labels or more."""
        host, _port = split_domain_port(request.get_host())
        if not host:
            return None
        try:
            ipaddress.ip_address(host.strip("[]"))
            return None
        except ValueError:
            pass
        if isinstance(self.subdomain, str):
            label, dot, base = host.partition(".")
            return label if dot and base == self.subdomain else None
        labels = host.split(".")
        return labels[0] if len(labels) >= 3 else None

    def subdomain_tenant(self, request: HttpRequest) -> Any | None:
        slug = self.subdomain_slug(request)
        if slug is None:
            return None
        manager = self.tenant_model()._default_manager
        return manager.filter(slug=slug).values_list("pk", flat=True).first()

    # -- resolving ----------------------------------------------------------------------------
    def __call__(self, request: HttpRequest) -> Any:
        return self.resolve(request)[0]

    def resolve(self, request: HttpRequest) -> tuple[Any, bool]:
        """``(tenant id, fell back)``: ``fell back`` is True when the answer is
        ``public_tenant`` for want of anything better (an anonymous request, a user with
        no membership), so that nothing is done on that tenant's behalf."""
        user = request_user(request)
        if user is None:
            return self.public_tenant, True
        members = self.member_tenant_ids(user)
        if self.header:
            wanted = request.headers.get(self.header)
            if wanted is not None:
                return require_member(wanted, members), False
        if self.session_key:
            chosen = self._session_choice(request, members)
            if chosen is not None:
                return chosen, False
        if self.subdomain:
            tenant = self.subdomain_tenant(request)
            if tenant is not None:
                return require_member(tenant, members), False
        if members:
            return members[0], False
        return self.public_tenant, True

    def _session_choice(self, request: HttpRequest, members: Sequence[Any]) -> Any | None:
        from appframework.http import has_authorization

        if has_authorization(request):
            # A token request is judged by the token alone, never by the session a
            # browser's cookie may carry beside it (and its response sets no cookie).
            return None
        session = getattr(request, "session", None)
        if session is None:
            return None
        chosen = session.get(self.session_key)
        if chosen is None:
            return None
        member = _member(chosen, members)
        if member is None:
            session.pop(self.session_key, None)  # lost that membership: forget the choice
        return member

    def select(self, request: HttpRequest, tenant_id: Any) -> Any:
        """Store ``tenant_id`` as the session's choice, once the session's user is a
        member of it (403 ``tenant_not_member`` otherwise, 401 with no session user, a
        token request included); the id stored is returned. The current request keeps
        the tenant it was resolved with: redirect."""
        from appframework.auth import require_auth_sync

        if not self.session_key:
            raise ImproperlyConfigured(
                "This tenant resolver keeps no session choice (session_key=None)."
            )
        user = require_auth_sync(request)
        member = require_member(tenant_id, self.member_tenant_ids(user))
        # Sessions are serialised to JSON: an id that is not an int (a UUID) is kept as
        # text, and compared as text when read back.
        request.session[self.session_key] = member if isinstance(member, int | str) else str(member)
        return member


def tenant_resolver(
    *,
    member_tenant_ids: MemberTenantIds | type[models.Model] | str,
    header: str | None = "X-Tenant",
    session_key: str | None = "tenant_id",
    subdomain: bool | str = False,
    public_tenant: Any = None,
    tenant_model: type[models.Model] | str | None = None,
) -> TenantResolver:
    """A resolver for ``APPFRAMEWORK["TENANCY"]["RESOLVER"]`` (module docstring: the
    sources and their order).

    ``member_tenant_ids``: the membership model (a subclass of
    :class:`~appframework_tenancy.models.AbstractMembership`, or its ``"app.Model"``
    label), or a function ``user -> tenant ids``, first membership first.
    ``header``/``session_key``: None turns that source off. ``subdomain``: True, or the
    parent domain (``"example.com"``), to read the tenant's slug from the host; the
    tenant model comes from the membership model's ``tenant`` foreign key, or
    ``tenant_model``. ``public_tenant``: the tenant of anonymous requests and of users
    with no membership.
    """
    return TenantResolver(
        member_tenant_ids=member_tenant_ids,
        header=header,
        session_key=session_key,
        subdomain=subdomain,
        public_tenant=public_tenant,
        tenant_model=tenant_model,
    )


def configured_resolver() -> TenantResolver:
    """``APPFRAMEWORK["TENANCY"]["RESOLVER"]``, which must be made by :func:`tenant_resolver`."""
    from appframework.conf import app_settings

    resolver = app_settings.TENANCY.RESOLVER
    if not isinstance(resolver, TenantResolver):
        raise ImproperlyConfigured(
            "select_tenant() needs APPFRAMEWORK['TENANCY']['RESOLVER'] made by "
            "tenant_resolver(); a hand-written resolver stores its own choice."
        )
    return resolver


def select_tenant(request: HttpRequest, tenant_id: Any) -> Any:
    """Store ``tenant_id`` as the session's choice for the configured resolver, after
    checking the session user's membership (:meth:`TenantResolver.select`)."""
    return configured_resolver().select(request, tenant_id)
