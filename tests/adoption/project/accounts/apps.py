from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "tests.adoption.project.accounts"
    label = "accounts"

    def ready(self) -> None:
        # A Gate ability defined at start-up: needs appframework.authorization listed
        # before this app (else LookupError: Nothing is bound to 'Gate').
        from appframework.authorization import Gate
        from appframework.container import container

        container.resolve(Gate).define("see-reports", lambda user: user.is_staff)
