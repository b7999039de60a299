from django.apps import AppConfig


class BlogConfig(AppConfig):
    name = "testproject.blog"
    label = "blog"
    default_auto_field = "django.db.models.BigAutoField"
