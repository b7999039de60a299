from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    """The project's user model before adopting: Django's, as ``startproject`` users write it."""
