from django.apps import AppConfig


class LabConfig(AppConfig):
    """Models of the tenancy leak matrix (no migrations: created by the test runner)."""

    name = "tests.tenancy.lab"
    label = "tenancy_lab"
    default_auto_field = "django.db.models.BigAutoField"
