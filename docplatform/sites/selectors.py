"""Reads of published sites."""


def feedback_context(space) -> dict:
    """What the space's settings page shows of the visitors' feedback."""
    return {}
