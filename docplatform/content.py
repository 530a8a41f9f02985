"""The rules of a space's content: what a page path, title, condition and body may be (an
adaptive section's condition included: ``conditions``), how many pages a revision
holds, and how a page's Markdown is rendered into its row (``rendered``). The
services that write revisions, Git sync's import and the sites' addresses all check pages
here."""

import re

from django.conf import settings
from django.core.exceptions import ValidationError

from .markdown import RENDERER_VERSION, adaptive_problems, condition_problem, parse_document
from .rendering import document_as_json

MAX_MESSAGE_LENGTH = 500
MAX_TITLE_LENGTH = 300
MAX_PATH_LENGTH = 300
#: A page's Markdown, in UTF-8 bytes.
MAX_PAGE_BYTES = 512 * 1024
PATH_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: Addresses of the reader that a page path would shadow (``/s/<space>/history``, ...): no
#: path starts with these, and no part of one is ``edit``.
RESERVED_PATHS = {"history", "settings", "new", "-"}
RESERVED_SEGMENTS = {"edit"}


def page_path_problem(path) -> str | None:
    """Why ``path`` cannot name a page (segments of letters, digits, '.', '-', '_' joined by
    '/'; none of the reader's own addresses), or None."""
    if not isinstance(path, str) or not path.strip():
        return "is required"
    if len(path) > MAX_PATH_LENGTH:
        return f"at most {MAX_PATH_LENGTH} characters"
    segments = path.split("/")
    if not all(PATH_SEGMENT.fullmatch(segment) for segment in segments):
        return (
            "letters, digits, '.', '-' and '_' in parts joined by '/', each starting with a "
            "letter or digit (e.g. guide/install)"
        )
    if segments[0] in RESERVED_PATHS or RESERVED_SEGMENTS & set(segments):
        return "history, settings, new and edit are the reader's own addresses"
    return None


def condition_of(page: dict) -> str:
    """A page's condition as stored: "" for none (absent, null or blank)."""
    condition = page.get("condition")
    return condition.strip() if isinstance(condition, str) else ""


def page_condition_problem(condition) -> str | None:
    """Why ``condition`` cannot be a page's (None, "" and blank mean "shown to everyone")."""
    if condition is None or (isinstance(condition, str) and not condition.strip()):
        return None
    if not isinstance(condition, str):
        return "must be a string (a condition on visitor.claims), or null"
    return condition_problem(condition.strip())


def page_limit_error() -> str:
    """What a write that would pass the pages a space may hold is told."""
    return (
        f"a space holds at most {settings.SPACE_MAX_PAGES} pages (the operator's "
        "SPACE_MAX_PAGES setting)"
    )


def check_pages(pages, *, allow_empty: bool = False) -> None:
    """Each of ``pages`` (a revision's, or the ones a revision writes with ``allow_empty``)
    is a page: ValidationError naming ``pages.N.field``."""
    errors = {}
    if not isinstance(pages, list) or not (pages or allow_empty):
        raise ValidationError({"pages": ["give at least one page"]})
    if len(pages) > settings.SPACE_MAX_PAGES:
        raise ValidationError({"pages": [page_limit_error()]})
    seen = set()
    for index, page in enumerate(pages):
        if not isinstance(page, dict):
            errors[f"pages.{index}"] = ["must be an object with path, title and body"]
            continue
        problem = page_path_problem(page.get("path"))
        if problem:
            errors[f"pages.{index}.path"] = [problem]
        title = page.get("title")
        if not isinstance(title, str) or not title.strip():
            errors[f"pages.{index}.title"] = ["is required"]
        elif len(title.strip()) > MAX_TITLE_LENGTH:
            errors[f"pages.{index}.title"] = [f"at most {MAX_TITLE_LENGTH} characters"]
        problem = page_condition_problem(page.get("condition"))
        if problem:
            errors[f"pages.{index}.condition"] = [problem]
        body = page.get("body", "")
        if not isinstance(body, str):
            errors[f"pages.{index}.body"] = ["must be a string"]
        elif len(body.encode("utf-8", "surrogatepass")) > MAX_PAGE_BYTES:
            errors[f"pages.{index}.body"] = [f"at most {MAX_PAGE_BYTES // 1024} KiB of Markdown"]
        elif problems := adaptive_problems(body):
            errors[f"pages.{index}.body"] = problems
        path = page.get("path")
        if isinstance(path, str) and path in seen:
            errors[f"pages.{index}.path"] = [f"duplicates the path {path!r}"]
        seen.add(path if isinstance(path, str) else None)
    if errors:
        raise ValidationError(errors)


def rendered(body: str) -> dict:
    """A page row's rendering fields for ``body``: its headings one level under the page's
    title (a ``# Heading`` is an ``<h2>``)."""
    document = parse_document(body, heading_offset=1)
    return {
        "html": document.html,
        "outline": document_as_json(document),
        "rendered_with": RENDERER_VERSION,
    }
