"""The project's ``accounts`` app as it was before adopting the suite: ``class
User(AbstractUser)`` and its first migration, nothing of the suite (used by
test_existing_data.py's "before" project)."""
