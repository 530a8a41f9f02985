"""Hooks the host's writers call after a write that other parts of the host act on, so that
the writer never imports them (Git sync imports the services that write revisions).

``on_revision_written(hook)`` registers ``hook(space=..., author=...)``, called by
``revisions.space_content_update`` in its transaction for every revision not imported from
Git; ``DocplatformConfig.ready`` registers Git sync's.

``on_space_content_changed(hook)`` registers ``hook(space=...)``, called by the same service
in its transaction for every new revision of a space, imported from Git or not;
``DocplatformConfig.ready`` registers the conversations' matching.

``on_pages_proposed(proposer)`` registers the one ``proposer(space=..., subject=...,
description=..., actor=..., based_on=..., pages=..., message=...)`` that puts pages before the
space's people without writing them (the documents' change requests); ``pages_propose`` calls
it and returns what it made. Git sync proposes the branch's side of a conflict this way.

``on_space_settings(section)`` registers ``section(space) -> dict``, the context a feature's
part of a space's settings page reads (Git sync's connection, the sites' feedback);
``space_settings_context(space)`` merges them.
"""

from collections.abc import Callable
from typing import Any

_revision_hooks: list[Callable] = []


def on_revision_written(hook: Callable) -> Callable:
    if hook not in _revision_hooks:
        _revision_hooks.append(hook)
    return hook


def revision_written(*, space, author=None) -> None:
    for hook in _revision_hooks:
        hook(space=space, author=author)


_content_hooks: list[Callable] = []


def on_space_content_changed(hook: Callable) -> Callable:
    if hook not in _content_hooks:
        _content_hooks.append(hook)
    return hook


def space_content_changed(*, space) -> None:
    for hook in _content_hooks:
        hook(space=space)


_proposers: list[Callable] = []


def on_pages_proposed(proposer: Callable) -> Callable:
    _proposers[:] = [proposer]
    return proposer


def pages_propose(**proposal) -> Any:
    if not _proposers:
        raise LookupError("no feature proposes pages (the documents' change requests)")
    return _proposers[0](**proposal)


_settings_sections: list[Callable] = []


def on_space_settings(section: Callable) -> Callable:
    if section not in _settings_sections:
        _settings_sections.append(section)
    return section


def space_settings_context(space) -> dict:
    context: dict = {}
    for section in _settings_sections:
        context |= section(space)
    return context
