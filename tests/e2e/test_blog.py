"""/blog in the browser: its CSRF-protected form post, the same post forged from another
origin or without its token, and the Gate deciding the Delete button."""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from testproject.blog.management.commands.seed_demo import DEMO_USERS

from .conftest import DemoServer, OtherOrigin, Steps, expect, form_token, log_in

USERS = {user.role: user for user in DEMO_USERS}
READER, EDITOR = USERS["reader"], USERS["editor"]
TOKEN_FIELDS = "input[name=_token], input[name=csrfmiddlewaretoken]"


def _title(kind: str) -> str:
    return f"{kind} {secrets.token_hex(4)}"


def _is_blog_post(response: Any) -> bool:
    return response.request.method == "POST" and response.url.split("?")[0].endswith("/blog")


def assert_redirects_to_blog(response: Any) -> None:
    """A form post that worked: a redirect back to the list (Post/Redirect/Get)."""
    assert 300 <= response.status < 400, response.status
    assert urlsplit(response.header_value("location") or "").path == "/blog"


def open_blog_as_editor(page: Any, steps: Steps) -> None:
    log_in(page, EDITOR.email, EDITOR.password)
    page.goto("/blog")
    expect(page.locator("#new-post")).to_be_visible()
    steps(page, "blog as the editor")


def test_editor_creates_a_post_through_the_csrf_protected_blog_form(
    page: Any, steps: Steps
) -> None:
    open_blog_as_editor(page, steps)
    title = _title("Form post")
    page.fill("#new-post [name=title]", title)
    page.fill("#new-post [name=body]", "Written in Chromium through the /blog form.")
    steps(page, "new post form filled")
    with page.expect_response(_is_blog_post) as posted:
        page.locator("#new-post button").click()
    assert_redirects_to_blog(posted.value)
    expect(page).to_have_url(re.compile(r"/blog$"))
    expect(page.locator("li.post", has_text=title)).to_have_count(1)
    steps(page, "post listed")


def test_blog_form_posted_from_another_origin_is_refused_with_403_even_with_the_token(
    page: Any, steps: Steps, other_origin: OtherOrigin, demo: DemoServer
) -> None:
    open_blog_as_editor(page, steps)
    field = page.eval_on_selector(f"#new-post :is({TOKEN_FIELDS})", "input => input.name")
    token = form_token(page, "#new-post")
    title = _title("Forged post")
    # The other site's page posts the form as soon as it loads. It even carries the
    # user's real token (as if it had leaked): the Origin check alone must refuse it.
    other_origin.pages["/forged.html"] = f"""<!doctype html>
<title>Another site</title><h1>Another site</h1>
<form id="forged" method="post" action="{html.escape(demo.url)}/blog">
  <input name="title" value="{html.escape(title)}">
  <input name="body" value="Posted from another origin.">
  <input type="hidden" name="{html.escape(field)}" value="{html.escape(token)}">
</form>
<script>document.getElementById("forged").submit();</script>
"""
    with page.expect_response(_is_blog_post) as posted:
        page.goto(f"{other_origin.url}/forged.html")
    response = posted.value
    assert response.request.header_value("origin") == other_origin.url
    # Same site, other port: the browser sent the demo's cookies with the forged post.
    assert "csrf_token=" in (response.request.header_value("cookie") or "")
    assert response.status == 403
    expect(page.locator("h1")).to_contain_text("403")
    # The demo runs with DEBUG=1, whose CSRF failure page names the rule that refused.
    expect(page.locator("body")).to_contain_text("Origin checking failed")
    steps(page, "forged post refused 403")

    page.goto("/blog")
    expect(page.locator("#new-post")).to_be_visible()
    expect(page.locator("li.post", has_text=title)).to_have_count(0)
    steps(page, "blog without the forged post")


def test_blog_form_without_its_token_is_refused_with_403(page: Any, steps: Steps) -> None:
    open_blog_as_editor(page, steps)
    title = _title("Tokenless post")
    page.fill("#new-post [name=title]", title)
    removed = page.eval_on_selector(
        "#new-post",
        f"form => {{ const f = form.querySelectorAll({TOKEN_FIELDS!r}); "
        "f.forEach(i => i.remove()); return f.length; }",
    )
    assert removed >= 1
    steps(page, "form without its token")
    with page.expect_response(_is_blog_post) as posted:
        page.locator("#new-post button").click()
    assert posted.value.status == 403
    expect(page.locator("h1")).to_contain_text("403")
    expect(page.locator("body")).to_contain_text("CSRF token missing")
    steps(page, "tokenless post refused 403")

    page.goto("/blog")
    expect(page.locator("li.post", has_text=title)).to_have_count(0)
    steps(page, "blog without the tokenless post")


def _is_delete_of(post_id: str) -> Callable[[Any], bool]:
    def match(response: Any) -> bool:
        return response.request.method == "POST" and response.url.endswith(
            f"/posts/{post_id}/delete"
        )

    return match


def test_gate_refuses_the_reader_deleting_another_users_post_and_lets_the_editor(
    new_page: Callable[[], Any], steps: Steps
) -> None:
    reader = new_page()
    log_in(reader, READER.email, READER.password)
    reader.goto("/blog")
    # The reader has written nothing: every post listed is someone else's.
    victim = reader.locator("li.post").first
    expect(victim).to_be_visible()
    post_id = victim.get_attribute("data-id")
    assert post_id
    title = victim.locator("strong").first.inner_text()
    steps(reader, "blog as the reader")
    with reader.expect_response(_is_delete_of(post_id)) as refused:
        victim.locator("form.delete button").click()
    assert refused.value.status == 403
    expect(reader.locator("h1")).to_contain_text("403")
    expect(reader.locator("body")).to_contain_text("delete-post")
    steps(reader, "reader refused 403")
    reader.goto("/blog")
    expect(reader.locator(f'li.post[data-id="{post_id}"]')).to_have_count(1)

    editor = new_page()
    log_in(editor, EDITOR.email, EDITOR.password)
    editor.goto("/blog")
    target = editor.locator(f'li.post[data-id="{post_id}"]')
    expect(target).to_contain_text(title)
    steps(editor, "blog as the editor")
    with editor.expect_response(_is_delete_of(post_id)) as deleted:
        target.locator("form.delete button").click()
    assert_redirects_to_blog(deleted.value)
    expect(editor).to_have_url(re.compile(r"/blog$"))
    expect(editor.locator(f'li.post[data-id="{post_id}"]')).to_have_count(0)
    steps(editor, "post deleted by the editor")
