from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from appframework.mfa.admin import HiddenFieldsAdminMixin

from .models import User


@admin.register(User)
class UserAdmin(HiddenFieldsAdminMixin, DjangoUserAdmin):  # adopting: the mixin first
    pass
