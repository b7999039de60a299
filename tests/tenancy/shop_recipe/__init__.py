"""A throwaway app whose migrations follow docs/tenancy.md's recipe for adding
``tenant_id`` to tables that already have rows. Never installed: test_migration_recipe.py
applies its migrations with Django's MigrationExecutor and rolls them back."""
