"""The tenant filter, bound when the SQL is compiled rather than when the queryset is
built: a queryset made at import time (a view's class attribute, a form field's
choices) or under another tenant follows the tenant active when it runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import FullResultSet
from django.db.models import BooleanField, Expression, F, Lookup

from appframework.conf import app_settings

from .context import ALL_TENANTS, TENANT, tenant_state
from .exceptions import TenantRequired

__all__ = ["TenantCondition", "TenantScope", "tenant_filter_active"]


def tenant_filter_active() -> Any:
    """The tenant id to filter on now, or None for "no filter".

    Raises :class:`TenantRequired` in strict mode when no tenant is selected (and
    :func:`~appframework_tenancy.all_tenants` is not in force).
    """
    state = tenant_state()
    if state is ALL_TENANTS:
        return None
    if state is None and app_settings.TENANCY.STRICT:
        raise TenantRequired(code="tenant_required")
    return state


class TenantCondition(Lookup):
    """What :class:`TenantScope` resolves to. A ``Lookup``, so Django puts it in the
    WHERE clause as it is rather than wrapping it in an ``= true`` comparison: the same
    work as a hand-written ``filter(tenant_id=...)``, decided at compile time."""

    lookup_name = "tenant_scope"
    prepare_rhs = False

    def __init__(self, lhs: Any) -> None:  # no right-hand side to prepare
        self.lhs = lhs
        self.rhs = None

    def get_source_expressions(self) -> list[Any]:
        return [self.lhs]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        (self.lhs,) = exprs

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, Any]:
        tenant = tenant_filter_active()
        if tenant is None:
            raise FullResultSet
        sql, params = compiler.compile(self.lhs)
        tenant = self.lhs.output_field.get_db_prep_value(tenant, connection, prepared=False)
        return f"{sql} = %s", (*params, tenant)


class TenantScope(Expression):
    """``queryset.filter(TenantScope())``: ``tenant_id = <current tenant>`` at compile
    time, or no condition at all when no tenant is selected (Django drops a condition
    that raises ``FullResultSet``, so the SQL is exactly the unfiltered query's)."""

    conditional = True
    output_field = BooleanField()

    def __init__(self, field: str = TENANT) -> None:
        super().__init__()
        self.column_name = field

    def resolve_expression(  # type: ignore[override]
        self,
        query: Any = None,
        allow_joins: bool = True,
        reuse: Any = None,
        summarize: bool = False,
        for_save: bool = False,
    ) -> TenantCondition:
        return TenantCondition(
            F(self.column_name).resolve_expression(query, allow_joins, reuse, summarize, for_save)
        )
