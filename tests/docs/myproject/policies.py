from testproject.blog.policies import PostPolicy

__all__ = ["PostPolicy"]
