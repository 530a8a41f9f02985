"""Callers that are not people: what a plug-in's API token authenticates as.

The host platform knows no plug-in: an app that gives code its own tokens (``integrations``:
installation tokens) authenticates them itself and puts a *machine principal* in
``request.user``. The host's API asks the principal what it may reach; it never looks at
what is behind it.
"""

from typing import Protocol


class MachinePrincipal(Protocol):
    """A token's caller that is not a person (``is_machine`` is true)."""

    is_machine: bool
    is_authenticated: bool
    #: Who it is in the audit log: an id, and a label a person recognizes (what it acts for).
    actor_id: str
    actor_label: str

    def has_scope(self, scope: str) -> bool:
        """Whether the caller acts with ``scope`` (``space:content:read``, ...)."""

    def scope_refusal(self, scope: str) -> str:
        """Why the caller may not use ``scope``, in a sentence for the 403."""

    def within(self, scope: str) -> "MachinePrincipal":
        """The caller narrowed to a request that uses ``scope`` (it ``has_scope``): its
        ``spaces`` and ``sites`` are then what it reaches with that scope (a caller acting
        for several installations reaches, per scope, those of the installations granted
        it)."""

    def spaces(self):
        """The spaces it reaches (a QuerySet of Space)."""

    def sites(self):
        """The sites it reaches (a QuerySet of Site)."""

    def installation_in(self, organization_id: str) -> str | None:
        """The id of the installation it acts as in the organization (what it posts there
        belongs to that installation, such as conversations); None where it has none."""

    def organizations(self):
        """The organizations whose own resources (such as OpenAPI documents) it reaches, as
        far as its scopes allow (a QuerySet of Organization)."""


def is_machine(user) -> bool:
    return bool(getattr(user, "is_machine", False))
