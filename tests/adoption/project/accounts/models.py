from django.contrib.auth.models import AbstractUser

from appframework.auth import Authenticatable
from appframework.authorization import HasRoles
from appframework.mfa import MfaEnrollable


class User(Authenticatable, HasRoles, MfaEnrollable, AbstractUser):
    """The project's existing user model; the suite's mixins go first."""
