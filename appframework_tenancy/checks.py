"""System checks of the TenancyServiceProvider (ids ``appframework_tenancy.E0xx`` /
``W0xx``; docs/checks.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig, apps
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models
from django.db.models import F

from appframework.checks import AUTH_MIDDLEWARE, check_error, check_warning, middleware_index
from appframework.conf import app_settings

from .context import TENANT
from .guards import is_tenant_model
from .models import TenantManager

TENANT_MIDDLEWARE = "appframework_tenancy.middleware.TenantMiddleware"


def check_resolver(**kwargs: Any) -> list[checks.CheckMessage]:
    """E001: the resolver is configured, importable and callable."""
    hint = (
        "Set APPFRAMEWORK['TENANCY']['RESOLVER'] to the dotted path of "
        "resolver(request) -> tenant id or None."
    )
    try:
        resolver = app_settings.TENANCY.RESOLVER
    except ImproperlyConfigured as exc:
        return [check_error("appframework_tenancy.E001", str(exc), hint)]
    if resolver is None:
        return [check_error("appframework_tenancy.E001", "No tenant resolver is configured.", hint)]
    if not callable(resolver):
        return [
            check_error(
                "appframework_tenancy.E001",
                f"The tenant resolver {resolver!r} is not callable.",
                hint,
            )
        ]
    return []


def check_middleware(**kwargs: Any) -> list[checks.CheckMessage]:
    """E002: TenantMiddleware is installed; E003: after AuthenticationMiddleware."""
    index = middleware_index(TENANT_MIDDLEWARE)
    if index is None:
        return [
            check_error(
                "appframework_tenancy.E002",
                "TenantMiddleware is not in MIDDLEWARE: requests run with no tenant.",
                f"Add {TENANT_MIDDLEWARE!r} after AuthenticationMiddleware.",
            )
        ]
    auth = middleware_index(AUTH_MIDDLEWARE)
    if auth is not None and auth > index:
        return [
            check_error(
                "appframework_tenancy.E003",
                "TenantMiddleware comes before AuthenticationMiddleware: the resolver "
                "cannot see the user.",
                "Move TenantMiddleware after AuthenticationMiddleware.",
            )
        ]
    return []


def check_gate_order(**kwargs: Any) -> list[checks.CheckMessage]:
    """E006: the Gate's tenant guard needs the Gate bound first."""
    if not app_settings.TENANCY.GATE_GUARD or not apps.is_installed("appframework.authorization"):
        return []
    names = [config.name for config in apps.get_app_configs()]
    if names.index("appframework_tenancy") < names.index("appframework.authorization"):
        return [
            check_error(
                "appframework_tenancy.E006",
                "appframework_tenancy is listed before appframework.authorization, so the "
                "Gate's tenant guard could not be added.",
                "List appframework_tenancy after appframework.authorization in INSTALLED_APPS.",
            )
        ]
    return []


def _tenant_models(app_configs: Sequence[AppConfig] | None) -> list[Any]:
    configs = app_configs if app_configs is not None else apps.get_app_configs()
    return [
        model
        for config in configs
        for model in config.get_models(include_auto_created=True)
        if is_tenant_model(model) and not model._meta.abstract
    ]


def check_models(
    *, app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E004 default manager, E005 tenant column, W001 global uniqueness, W002 untenanted
    many-to-many tables."""
    messages: list[checks.CheckMessage] = []
    for model in _tenant_models(app_configs):
        label = model._meta.label
        try:
            column = model._meta.get_field(TENANT)
        except FieldDoesNotExist:
            column = None
        if column is None or column.null:
            messages.append(
                check_error(
                    "appframework_tenancy.E005",
                    f"{label} has no NOT NULL tenant_id column.",
                    "Subclass TenantModel, or declare tenant_id (or a 'tenant' foreign key) with null=False.",
                    obj=model,
                )
            )
        if not isinstance(model._default_manager, TenantManager):
            messages.append(
                check_error(
                    "appframework_tenancy.E004",
                    f"The default manager of {label} ({model._default_manager.name}) is not "
                    "a TenantManager: the admin, forms, serializers and related managers "
                    "would read every tenant.",
                    "Declare the scoped manager first (objects = TenantManager()), or set "
                    "Meta.default_manager_name.",
                    obj=model,
                )
            )
        messages.extend(_unique_warnings(model))
        for field in model._meta.local_many_to_many:
            through = field.remote_field.through
            if is_tenant_model(field.related_model) and through._meta.auto_created:
                messages.append(
                    check_warning(
                        "appframework_tenancy.W002",
                        f"{label}.{field.name} joins two tenant models through an "
                        "auto-created table, which has no tenant_id: its rows are "
                        "visible to every tenant.",
                        "Declare an explicit through model that subclasses TenantModel.",
                        obj=model,
                    )
                )
    return messages


def _referenced_names(expression: Any) -> set[str]:
    """Field names an expression of a constraint refers to (``Lower("code")``...)."""
    if isinstance(expression, F):
        return {str(getattr(expression, "name", ""))}
    names: set[str] = set()
    for source in getattr(expression, "get_source_expressions", list)():
        if source is not None:
            names |= _referenced_names(source)
    return names


def _unique_warnings(model: Any) -> list[checks.CheckMessage]:
    label = model._meta.label
    groups: list[tuple[str, set[str]]] = []
    for field in model._meta.local_fields:
        if field.unique and not field.primary_key and not field.is_relation:
            groups.append((field.name, {field.name}))
    for together in model._meta.unique_together:
        groups.append((", ".join(together), set(together)))
    for constraint in model._meta.constraints:
        if not isinstance(constraint, models.UniqueConstraint):
            continue
        names = set(constraint.fields)
        for expression in constraint.expressions:
            names |= _referenced_names(expression)
        groups.append((constraint.name, names))
    tenant_names = {TENANT, "tenant"}
    return [
        check_warning(
            "appframework_tenancy.W001",
            f"{label}: the uniqueness of {name} spans every tenant: one tenant's value "
            "blocks another's, and the IntegrityError tells that the value exists.",
            "Include tenant_id in the unique constraint, or silence this check for a "
            "value that is global on purpose.",
            obj=model,
        )
        for name, fields in groups
        if not fields & tenant_names
    ]


def _alias_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(a, str) for a in value)


def _rls_aliases() -> list[str]:
    value = app_settings.TENANCY.ROW_LEVEL_SECURITY
    return list(value) if _alias_list(value) else []


def check_row_level_security(**kwargs: Any) -> list[checks.CheckMessage]:
    """E007: ``ROW_LEVEL_SECURITY`` lists aliases of PostgreSQL databases."""
    from django.db import connections

    value = app_settings.TENANCY.ROW_LEVEL_SECURITY
    hint = (
        "Set APPFRAMEWORK['TENANCY']['ROW_LEVEL_SECURITY'] to a list of aliases of "
        "PostgreSQL databases in DATABASES, such as ['default'], or to []."
    )
    if not _alias_list(value):
        return [
            check_error(
                "appframework_tenancy.E007",
                f"TENANCY['ROW_LEVEL_SECURITY'] must be a list of database aliases, not {value!r}.",
                hint,
            )
        ]
    messages: list[checks.CheckMessage] = []
    for alias in value:
        # The backend's vendor, not its dotted path: PostGIS and other PostgreSQL
        # backends say "postgresql" too (and asking opens no connection).
        if alias not in connections or connections[alias].vendor != "postgresql":
            messages.append(
                check_error(
                    "appframework_tenancy.E007",
                    f"TENANCY['ROW_LEVEL_SECURITY'] names {alias!r}, which is not a "
                    "PostgreSQL database of DATABASES: row-level security needs PostgreSQL.",
                    hint,
                )
            )
    return messages


def check_row_level_security_database(
    *,
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: Any,
) -> list[checks.CheckMessage]:
    """W003 the application's role skips policies; W004 an existing table of a tenant model
    has no forced policy (run by ``check --database`` and by ``migrate``, before it
    migrates: a table it has yet to create is not reported)."""
    from django.db import DatabaseError, connections, router

    from .postgres import role_skips_policies

    messages: list[checks.CheckMessage] = []
    for alias in _rls_aliases():
        if databases is None or alias not in databases or alias not in connections:
            continue
        connection = connections[alias]
        if connection.vendor != "postgresql":
            continue  # E007 said so
        tables = {
            model._meta.db_table: model
            for model in _tenant_models(app_configs)
            if router.allow_migrate_model(alias, model)
        }
        try:
            skips = role_skips_policies(connection)
        except DatabaseError:
            skips = False  # the database is not reachable: nothing to say about it
        if skips:
            messages.append(
                check_warning(
                    "appframework_tenancy.W003",
                    f"The role of database {alias!r} is a superuser or has BYPASSRLS: "
                    "PostgreSQL skips every row-level-security policy for it.",
                    "Connect the application as an ordinary role (NOSUPERUSER "
                    "NOBYPASSRLS) that owns the tables, or is granted them.",
                )
            )
        try:
            with connection.cursor() as cursor:
                # Only tables that exist, found as the search path finds them.
                cursor.execute(
                    "SELECT t.name, c.relrowsecurity AND c.relforcerowsecurity "
                    "AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid) "
                    "FROM unnest(%s::text[]) AS t(name) "
                    "JOIN pg_class c ON c.oid = to_regclass(quote_ident(t.name))",
                    [list(tables)],
                )
                unguarded = {name for name, guarded in cursor.fetchall() if not guarded}
        except DatabaseError:
            unguarded = set()
        messages.extend(
            check_warning(
                "appframework_tenancy.W004",
                f"{model._meta.label} (table {table}) is on a database with "
                "ROW_LEVEL_SECURITY but has no forced row-level-security policy: raw SQL "
                "on it is not held to the tenant.",
                "Add migrations.RunSQL(rls_policy_sql(table)) to a migration of its app "
                "(appframework_tenancy.postgres).",
                obj=model,
            )
            for table, model in sorted(tables.items())
            if table in unguarded
        )
    return messages
