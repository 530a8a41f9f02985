"""The address a request came from, as the beacon, the visitor records and the audit log take
it: REMOTE_ADDR, or behind ``TRUSTED_PROXY_COUNT`` proxies the address the outermost trusted
proxy appended to X-Forwarded-For (anything left of it can be forged)."""

import ipaddress

from django.conf import settings


def _is_ip_address(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def client_ip(request) -> str:
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    if proxies > 0 and hops:
        candidate = hops[-min(proxies, len(hops))]
        if _is_ip_address(candidate):
            return candidate
    return remote
