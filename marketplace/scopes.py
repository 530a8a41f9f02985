"""What an integration may do, in words a member understands (the words themselves:
``docplatform_sdk.manifest.words``, which the admin's review queue reads too)."""

from docplatform_sdk.manifest.words import SCOPE_LABELS, network_access, scope_label

__all__ = ["SCOPE_LABELS", "network_access", "scope_label"]
