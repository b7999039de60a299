from django.apps import AppConfig


class BlogConfig(AppConfig):
    name = "testproject.blog"
    label = "blog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Abilities and policies are defined once, at start-up, on the container's Gate.
        from appframework.authorization import Gate
        from appframework.container import container

        from . import checks  # noqa: F401 - registers the deploy check blog.E001
        from .policies import register

        register(container.resolve(Gate))
