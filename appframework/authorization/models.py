"""Roles and permissions (tables ``roles``, ``permissions``, ``role_permissions``)."""

from __future__ import annotations

from django.db import models

__all__ = ["Permission", "Role"]


class Permission(models.Model):
    name = models.CharField(max_length=100, unique=True)

    class Meta:
        db_table = "permissions"
        ordering = ["name"]
        verbose_name = "permission"

    def __str__(self) -> str:
        return self.name


class Role(models.Model):
    name = models.CharField(max_length=50, unique=True)
    permissions = models.ManyToManyField(
        Permission, related_name="roles", blank=True, db_table="role_permissions"
    )

    class Meta:
        db_table = "roles"
        ordering = ["name"]
        verbose_name = "role"

    def __str__(self) -> str:
        return self.name
