from typing import Any

from django.core.management.base import BaseCommand

from appframework_tenancy import as_tenant
from testproject.blog.models import Post, Tenant, User

#: The account this command creates. A well-known login, so the deploy check blog.E001
#: (testproject/blog/checks.py) refuses to let a database holding it go live.
DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password"
#: Every account the seed creates (what blog.E001 looks for).
SEEDED_EMAILS: tuple[str, ...] = (DEMO_EMAIL,)


class Command(BaseCommand):
    help = f"Create the demo user ({DEMO_EMAIL} / {DEMO_PASSWORD}) and a few posts."

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(email=DEMO_EMAIL).first()
        if user is None:
            user = User.objects.create_superuser(DEMO_EMAIL, DEMO_PASSWORD, name="Demo")
        user.tenants.add(*Tenant.objects.all())
        for tenant in Tenant.objects.order_by("pk"):
            with as_tenant(tenant.pk):
                if not Post.objects.exists():
                    for n in range(1, 4):
                        Post.objects.create(
                            title=f"{tenant.name} post #{n}",
                            body=f"Written by the demo seed for {tenant.name}.",
                            author=user,
                        )
        self.seed_webhook()
        self.stdout.write(f"demo user: {DEMO_EMAIL} / {DEMO_PASSWORD}")

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
