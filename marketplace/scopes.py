"""What an integration may do, in words a member understands (the words themselves:
``integrations.scope_words``, which the admin's review queue reads too)."""

from integrations.scope_words import SCOPE_LABELS, network_access, scope_label

__all__ = ["SCOPE_LABELS", "network_access", "scope_label"]
