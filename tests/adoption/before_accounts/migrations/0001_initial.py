"""The adopted project's own first migration, the one applied before the suite came."""

from importlib import import_module

Migration = import_module("tests.adoption.project.accounts.migrations.0001_initial").Migration
