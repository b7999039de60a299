from testproject.blog.models import Post, Tenant, User

__all__ = ["Post", "Tenant", "User"]
