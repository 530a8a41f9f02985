"""Reads of Git sync."""


def settings_context(space) -> dict:
    """What the space's settings page shows of its Git connection and syncs."""
    return {}
