"""Hooks the host's writers call after a write that other parts of the host act on, so that
the writer never imports them (Git sync imports the services that write revisions).

``on_revision_written(hook)`` registers ``hook(space=..., author=...)``, called by
``revisions.space_content_update`` in its transaction for every revision not imported from
Git; ``DocplatformConfig.ready`` registers Git sync's.

``on_space_content_changed(hook)`` registers ``hook(space=...)``, called by the same service
in its transaction for every new revision of a space, imported from Git or not;
``DocplatformConfig.ready`` registers the conversations' matching.
"""

from collections.abc import Callable

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
