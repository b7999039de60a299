from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks


class AuthorizationServiceProvider(AppConfig):
    """Binds an empty :class:`~appframework.authorization.Gate` in the container.

    Define abilities from your own ``AppConfig.ready()``::

        gate = container.resolve(Gate)
        gate.define("delete-post", lambda user, post: post.author_id == user.pk)
        gate.policy(Post, PostPolicy)
    """

    # Two AppConfigs live in this module: this one is what "appframework.authorization"
    # in INSTALLED_APPS selects.
    default = True
    #: Import every installed app's ``policies`` module at start-up; the setting
    #: ``APPFRAMEWORK["AUTHORIZATION"]["AUTODISCOVER_POLICIES"]`` does the same.
    autodiscover = False
    name = "appframework.authorization"
    label = "appframework_authorization"
    verbose_name = "appframework: roles and permissions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import m2m_changed

        from .. import checks as core_checks  # noqa: F401 - registers the core checks
        from ..conf import app_settings
        from ..container import container
        from . import checks as authz_checks
        from .gate import Gate

        checks.register(authz_checks.check_backend)
        checks.register(authz_checks.check_app_order)
        # The first ready() keeps the Gate bound at import (an app listed earlier may
        # have registered abilities on it already); a later one binds a new, empty Gate.
        global _early_gate
        if _early_gate is None or container.resolve(Gate) is not _early_gate:
            container.bind(Gate, Gate())
        _early_gate = None
        # Any change of a user's roles drops that instance's role cache.
        m2m_changed.connect(_flush_roles, dispatch_uid="appframework.authorization.flush_roles")
        if self.autodiscover or app_settings.AUTHORIZATION.AUTODISCOVER_POLICIES:
            from .discovery import discover_policies

            discover_policies(container.resolve(Gate))


class AutodiscoverAuthorizationServiceProvider(AuthorizationServiceProvider):
    """The same provider, plus policy discovery: put
    ``"appframework.authorization.apps.AutodiscoverAuthorizationServiceProvider"`` in
    ``INSTALLED_APPS`` instead of ``"appframework.authorization"``.

    Every installed app's ``policies`` module is imported once at start-up (as the admin
    does with ``admin`` modules). Such a module registers its rules either with the
    :func:`~appframework.authorization.register_policy` class decorator or with a
    module-level ``register(gate)`` function, which is called with the Gate — no
    boilerplate in the project's own ``ready()``.
    """

    default = False
    autodiscover = True


def _flush_roles(sender: Any, instance: Any, **kwargs: Any) -> None:
    if kwargs.get("action", "").startswith("post_"):
        flush = getattr(instance, "flush_roles", None)
        if flush is not None:
            flush()


_early_gate: Any = None


def _bind_gate_early() -> None:
    """Bind the Gate when this module is imported, which Django does for every app
    before it calls any ``ready()``: an app listed before the suite's that defines
    abilities in its ``ready()`` gets the Gate instead of a ``LookupError`` (and
    ``appframework.W011`` tells it to move, since its before-hooks would run ahead of
    the suite's own, the tenant guard among them)."""
    from ..container import container
    from .gate import Gate

    global _early_gate
    if Gate not in container:
        _early_gate = Gate()
        container.bind(Gate, _early_gate)


_bind_gate_early()
