"""``manage.py tenant_command --tenant 5 dumpdata blog.post``: any command under a tenant
(its own options follow its name)."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandParser

from ...commands import TenantCommand


class Command(TenantCommand):
    help = "Run another management command under --tenant ID (or --all-tenants)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("command_name", help="The command to run.")
        parser.add_argument("command_args", nargs=argparse.REMAINDER, help="Its arguments.")

    def handle(self, *args: Any, **options: Any) -> None:
        # The inner command writes where this one was told to (call_command(stdout=...)).
        call_command(
            options["command_name"],
            *options["command_args"],
            stdout=self.stdout._out,
            stderr=self.stderr._out,
        )
