"""Management commands under a tenant: subclass :class:`TenantCommand` and every run
takes ``--tenant ID`` (or ``--all-tenants``); ``handle()`` runs under it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from .context import all_tenants, as_tenant, entered_state

__all__ = ["TenantCommand"]


class TenantCommand(BaseCommand):
    #: Require one of --tenant/--all-tenants (a command that forgot would otherwise run
    #: unscoped, or fail in strict mode).
    tenant_required = True

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        group = parser.add_mutually_exclusive_group(required=self.tenant_required)
        group.add_argument("--tenant", help="Run under this tenant id.")
        group.add_argument(
            "--all-tenants",
            action="store_true",
            help="Run across every tenant, on purpose.",
        )
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        tenant = options.get("tenant")
        if tenant is not None and not str(tenant).strip():
            raise CommandError("--tenant needs a tenant id.")
        if options.get("all_tenants"):
            scope = all_tenants()
        elif tenant is not None:
            scope = as_tenant(tenant)
        else:
            scope = entered_state(None)
        with scope:
            return super().execute(*args, **options)
