"""The visitor session of a published site: who the visitor is, and their claims.

Replaced by the visitor-session implementation at merge.
"""


def visitor_claims(request, site) -> dict:
    """The verified visitor's claims for ``site`` ({} when none)."""
    return {}
