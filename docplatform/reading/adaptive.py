"""Adaptive content as a visitor sees it (README, "Adaptive content"): whether a page is
shown to a visitor with some claims, and its stored rendering with only the adaptive sections
whose conditions hold. Every function takes the claims explicitly (a JSON object): published
sites pass the visitor's (``sites.visitor_sessions.visitor_claims``), the editor's preview the
ones a person typed."""

import json

from ..conditions import holds
from ..rendering import Document

#: The claims a person may type into the preview, in characters.
MAX_CLAIMS_LENGTH = 10_000


def page_shown(condition: str, claims: dict) -> bool:
    """Whether a page with ``condition`` ("" for none) is shown to a visitor with ``claims``."""
    return holds(condition, claims)


def shown_sections(document: Document, claims: dict) -> set[int]:
    """The indexes of the document's adaptive sections shown to ``claims`` (a section whose
    condition cannot be parsed never is)."""
    return {
        section.index
        for section in document.sections
        if not section.error and holds(section.condition, claims)
    }


def for_visitor(document: Document, claims: dict) -> Document:
    """The document as a visitor with ``claims`` sees it: hidden sections gone, with their
    headings and blocks."""
    if not document.sections:
        return document
    return document.selected(shown_sections(document, claims))


def has_adaptive_content(condition: str, document: Document) -> bool:
    """Whether what a visitor sees of the page depends on their claims."""
    return bool(condition or document.sections)


def claims_from_text(text: str) -> dict:
    """The claims a person typed as JSON (an object); ValueError saying what is wrong."""
    if len(text) > MAX_CLAIMS_LENGTH:
        raise ValueError(f"at most {MAX_CLAIMS_LENGTH} characters")
    try:
        claims = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"is not valid JSON ({error})") from None
    if not isinstance(claims, dict):
        raise ValueError('must be a JSON object, e.g. {"plan": "pro"}')
    return claims
