from __future__ import annotations

from typing import Any, NamedTuple

from django.core.management.base import BaseCommand
from django.db import transaction

from appframework_tenancy import as_tenant
from testproject.blog.models import Post, Tenant, User


class DemoUser(NamedTuple):
    email: str
    password: str
    role: str
    #: Slugs of the tenants the account belongs to.
    tenants: tuple[str, ...]
    #: What the account shows, as the landing page lists it.
    shows: str
    superuser: bool = False


#: The accounts this command creates, listed with their passwords on the landing page.
#: Well-known logins, so the deploy check blog.E001 (testproject/blog/checks.py) refuses
#: to let a database holding any of them go live.
DEMO_USERS: tuple[DemoUser, ...] = (
    DemoUser(
        "reader@example.com",
        "reader-password",
        "reader",
        ("acme",),
        "reads; Delete on someone else's post is a 403 from the Gate; X-Tenant: 2 is a 403",
    ),
    DemoUser(
        "editor@example.com",
        "editor-password",
        "editor",
        ("acme", "globex"),
        "may delete any post of the tenant; Publish is a 403",
    ),
    DemoUser(
        "moderator@example.com",
        "moderator-password",
        "moderator",
        ("acme", "globex"),
        "may publish any post (a role-based ability); may delete only its own",
    ),
    DemoUser(
        "admin@example.com",
        "admin-password",
        "admin",
        ("acme", "globex"),
        "superuser: the Django admin (webhook endpoints, delivery log), sees every email",
        superuser=True,
    ),
)

#: The superuser, for the admin and the examples in the docs.
DEMO_EMAIL = "admin@example.com"
DEMO_PASSWORD = "admin-password"
#: Every account the seed creates (what blog.E001 looks for).
SEEDED_EMAILS: tuple[str, ...] = tuple(u.email for u in DEMO_USERS)

TENANTS = (("acme", "Acme"), ("globex", "Globex"))


class Command(BaseCommand):
    help = "Create the demo tenants, users (one per role), posts and webhook endpoint."

    def handle(self, *args: Any, **options: Any) -> None:
        # One transaction: a failed seed leaves nothing half-made; running it again
        # changes nothing that exists (passwords of existing accounts are kept).
        with transaction.atomic():
            tenants = {
                slug: Tenant.objects.get_or_create(slug=slug, defaults={"name": name})[0]
                for slug, name in TENANTS
            }
            users = {demo.email: self.seed_user(demo, tenants) for demo in DEMO_USERS}
            self.seed_posts(tenants, users)
            self.seed_webhook()
        for demo in DEMO_USERS:
            self.stdout.write(f"{demo.role:<10} {demo.email} / {demo.password}")

    def seed_user(self, demo: DemoUser, tenants: dict[str, Tenant]) -> User:
        user = User.objects.filter(email=demo.email).first()
        if user is None:
            make = User.objects.create_superuser if demo.superuser else User.objects.create_user
            user = make(demo.email, demo.password, name=demo.role.capitalize())
        user.assign_role(demo.role)
        user.tenants.add(*(tenants[slug] for slug in demo.tenants))
        return user

    def seed_posts(self, tenants: dict[str, Tenant], users: dict[str, User]) -> None:
        """Three posts per tenant, written by the moderator and the admin, so that the
        reader meets posts that are not theirs (a 403 on Delete) and the editor posts it
        may delete anyway."""
        authors = [users["moderator@example.com"], users["admin@example.com"]]
        for tenant in tenants.values():
            with as_tenant(tenant.pk):
                if Post.objects.exists():
                    continue
                for n in range(1, 4):
                    Post.objects.create(
                        title=f"{tenant.name} post #{n}",
                        body=f"Written by the demo seed for {tenant.name}.",
                        author=authors[n % 2],
                    )

    def seed_webhook(self) -> None:
        """user.registered → the demo's own receiver, signed with DEMO_WEBHOOK_SECRET."""
        from django.conf import settings

        from appframework_webhooks import WebhookEndpoint

        url = settings.DEMO_BASE_URL.rstrip("/") + "/webhooks/receiver"
        WebhookEndpoint.objects.update_or_create(
            event="user.registered",
            url=url,
            defaults={"secret": settings.DEMO_WEBHOOK_SECRET, "active": True},
        )
