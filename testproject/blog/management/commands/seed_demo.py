from typing import Any

from django.core.management.base import BaseCommand

from testproject.blog.models import Post, User


class Command(BaseCommand):
    help = "Create the demo user (demo@example.com / demo-password) and a few posts."

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(email="demo@example.com").first()
        if user is None:
            user = User.objects.create_superuser("demo@example.com", "demo-password", name="Demo")
        if not Post.objects.exists():
            for n in range(1, 4):
                Post.objects.create(
                    title=f"Hello #{n}", body="Written by the demo seed.", author=user
                )
        self.stdout.write("demo user: demo@example.com / demo-password")
