"""appframework: a coherent auth, authorization, GraphQL, tenancy and webhooks suite."""

__version__ = "0.1.0"
__all__ = ["__version__"]
