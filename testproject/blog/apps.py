from django.apps import AppConfig


class BlogConfig(AppConfig):
    name = "testproject.blog"
    label = "blog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # SPEC's "provider boot()": the project's own ready() defines the abilities.
        from appframework.authorization import Gate
        from appframework.container import container

        from .policies import register

        register(container.resolve(Gate))
