from django.apps import AppConfig


class ShopConfig(AppConfig):
    """The label the docs' migration names ("shop"); only ever in an isolated registry."""

    name = "tests.tenancy.shop_recipe"
    label = "shop"
    default_auto_field = "django.db.models.BigAutoField"
