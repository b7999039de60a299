from testproject.blog.schema import schema

__all__ = ["schema"]
