"""The minimal project's user model: Django's, with the suite's mixin first."""

from django.contrib.auth.models import AbstractUser

from appframework.auth import Authenticatable


class User(Authenticatable, AbstractUser):
    pass
