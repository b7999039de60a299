"""The project's own pages, unchanged by adopting the suite."""

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

NOTES: list[str] = []


def home(request):
    return HttpResponse(f"home of {request.user.get_username() or 'anonymous'}")


@login_required
def private(request):
    return HttpResponse(f"private page of {request.user.get_username()}")


@login_required
def notes(request):
    """A form with {% csrf_token %}."""
    if request.method == "POST":
        NOTES.append(request.POST["text"])
        return redirect("notes")
    return render(request, "pages/notes.html", {"notes": NOTES})


@login_required
@require_POST
def api_notes(request):
    """What the project's JavaScript posts, with the X-CSRFToken header."""
    NOTES.append(json.loads(request.body)["text"])
    return JsonResponse({"count": len(NOTES)}, status=201)
