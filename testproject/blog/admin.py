from django.contrib import admin

from .models import Post, User


@admin.register(User)
class UserAdmin(admin.ModelAdmin):
    list_display = ("email", "name", "is_staff", "is_active")
    search_fields = ("email", "name")
    exclude = ("password_hash", "session_version")


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    list_display = ("title", "author", "created_at")
