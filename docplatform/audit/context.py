"""The address of the request being served, for the audit log's rows: set by
``AuditAddressMiddleware`` for every request of the platform's origin, read by
``audit.services.audit_record`` (services never see the request)."""

from contextvars import ContextVar

from ..client_address import client_ip

_address: ContextVar[str | None] = ContextVar("audit_address", default=None)


def current_address() -> str | None:
    return _address.get()


class AuditAddressMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _address.set(client_ip(request) or None)
        try:
            return self.get_response(request)
        finally:
            _address.reset(token)
