from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class TenancyServiceProvider(AppConfig):
    """Row-level tenancy. Parameters in ``APPFRAMEWORK["TENANCY"]``: ``RESOLVER``
    (required import string of ``resolver(request) -> tenant id or None``), ``STRICT``
    (False), ``CELERY`` (True), ``GATE_GUARD`` (True), ``ROW_LEVEL_SECURITY`` ([]). Also needs
    ``appframework_tenancy.middleware.TenantMiddleware`` after ``AuthenticationMiddleware``.
    """

    name = "appframework_tenancy"
    label = "appframework_tenancy"
    verbose_name = "appframework: tenancy"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created
        from django.db.models.signals import m2m_changed, post_save, pre_save

        from appframework import checks as core_checks  # noqa: F401 - core checks
        from appframework.conf import app_settings

        from . import checks as tenancy_checks
        from .postgres import install_carry_tenant
        from .signals import guard_m2m_add, guard_save, remember_saved

        checks.register(tenancy_checks.check_resolver)
        checks.register(tenancy_checks.check_middleware)
        checks.register(tenancy_checks.check_gate_order)
        checks.register(tenancy_checks.check_models, checks.Tags.models)
        checks.register(tenancy_checks.check_row_level_security)
        checks.register(tenancy_checks.check_row_level_security_database, checks.Tags.database)
        pre_save.connect(guard_save, dispatch_uid="appframework_tenancy.guard_save")
        post_save.connect(remember_saved, dispatch_uid="appframework_tenancy.remember_saved")
        m2m_changed.connect(guard_m2m_add, dispatch_uid="appframework_tenancy.guard_m2m")
        # Connected whatever the setting says now: it is read as each connection opens,
        # so a setting changed in a test applies to connections opened after the change.
        connection_created.connect(
            install_carry_tenant, dispatch_uid="appframework_tenancy.carry_tenant"
        )
        if app_settings.TENANCY.CELERY:
            from .celery import connect_celery

            connect_celery()
        if app_settings.TENANCY.GATE_GUARD:
            self._add_gate_guard()

    @staticmethod
    def _add_gate_guard() -> None:
        from appframework.container import container

        try:
            from appframework.authorization.gate import Gate
        except ImportError:
            return
        if Gate in container:
            from .gate import tenant_guard

            gate = container.resolve(Gate)
            if tenant_guard not in gate._before:
                gate.before(tenant_guard)
