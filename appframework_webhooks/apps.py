from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class WebhooksServiceProvider(AppConfig):
    """Signed outbound webhooks delivered by Celery. Parameters in
    ``APPFRAMEWORK["WEBHOOKS"]`` (docs/settings.md); binds ``WebhookManager`` in the
    container, declares its events in the catalogue (``webhook_events``) and fires
    ``user.registered`` on ``appframework.events.user_registered`` and
    ``user.passkey_added`` on ``passkey_added``."""

    name = "appframework_webhooks"
    label = "appframework_webhooks"
    verbose_name = "appframework: webhooks"
    default_auto_field = "django.db.models.BigAutoField"
    #: The events this app fires (docs/webhooks.md, "The event catalogue").
    webhook_events = "appframework_webhooks.events.WEBHOOK_EVENTS"

    def ready(self) -> None:
        from appframework import checks as core_checks  # noqa: F401 - core checks
        from appframework.container import container
        from appframework.events import passkey_added, user_registered

        from . import checks as webhook_checks
        from .events import fire_passkey_added, fire_user_registered
        from .manager import WebhookManager

        checks.register(webhook_checks.check_settings)
        checks.register(webhook_checks.check_visibility_timeout)
        checks.register(webhook_checks.check_ssrf_guard, checks.Tags.security, deploy=True)
        checks.register(webhook_checks.check_catalogue)
        checks.register(webhook_checks.check_subscriptions, checks.Tags.database)
        container.bind(WebhookManager, WebhookManager())
        user_registered.connect(
            fire_user_registered, dispatch_uid="appframework_webhooks.user_registered"
        )
        passkey_added.connect(
            fire_passkey_added, dispatch_uid="appframework_webhooks.passkey_added"
        )
        from . import tasks  # noqa: F401 - registers the jobs with Celery
