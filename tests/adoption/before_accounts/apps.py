from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "tests.adoption.before_accounts"
    label = "accounts"  # the adopted project's app, as it was before
    default_auto_field = "django.db.models.BigAutoField"
