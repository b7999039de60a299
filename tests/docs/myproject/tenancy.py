from testproject.blog.tenancy import resolve_tenant

__all__ = ["resolve_tenant"]
