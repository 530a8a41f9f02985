"""The webhook settings go through the setup flow; outbound URLs are checked (SSRF)."""

import socket

import pytest

from integrations.operators import OPERATOR
from integrations.services.installations import installation_configure
from webhooks.transport.outbound import UnsafeURL, check_url

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_no_event_selected_keeps_it_pending(install_webhook, space, receiver, webhook_settings):
    installation = install_webhook(space=space, url=receiver.url, space_content_updated=False)
    assert installation.status == "pending"
    assert installation.status_reasons == [
        {"path": "configuration", "message": "select at least one event (space_content_updated)"}
    ]
    installation = installation_configure(
        user=OPERATOR, installation=installation, changes={"space_content_updated": True}
    )
    assert installation.status == "active"


def test_a_missing_url_keeps_it_pending(install_webhook, site):
    installation = install_webhook(site=site)
    assert installation.status == "pending"
    assert {"path": "configuration.url", "message": "is required"} in installation.status_reasons


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/x", "only http and https URLs may be called"),
        (
            "http://127.0.0.1:8000/x",
            "127.0.0.1 resolves to 127.0.0.1, a loopback address (an operator may allow its "
            "network with WEBHOOK_ALLOWED_NETWORKS)",
        ),
        ("http://localhost/x", "localhost resolves to"),
        ("http://10.1.2.3/x", "a private address"),
        ("http://192.168.0.10/x", "a private address"),
        ("http://169.254.169.254/latest/meta-data", "a link-local address"),
        ("http://100.64.0.1/x", "a non-public address"),
        ("http://[::1]/x", "a loopback address"),
        ("http://[::ffff:127.0.0.1]/x", "an IPv4-mapped form of a loopback address"),
        ("http://[::ffff:10.0.0.1]/x", "an IPv4-mapped form of a private address"),
        ("http://[2002:7f00:1::]/x", "a 6to4 form of a loopback address"),
        ("http://[2002:a9fe:a9fe::]/x", "a 6to4 form of a link-local address"),
        ("http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x", "a Teredo form of a private address"),
        ("http://[64:ff9b::7f00:1]/x", "a NAT64 form of a loopback address"),
        ("http://[64:ff9b::a9fe:a9fe]/x", "a NAT64 form of a link-local address"),
        ("http://[fe80::1]/x", "a link-local address"),
        ("http://224.0.0.1/x", "a multicast address"),
        ("http://0.0.0.0/x", "address"),
        ("http://user:pw@example.com/x", "credentials in the URL are not allowed"),
        ("http:///nohost", "the URL has no host"),
        ("http://exa mple.com:99999/", "not a valid URL"),
        ("", "give an http or https URL"),
    ],
)
def test_unsafe_urls_are_a_configuration_error_at_save_time(install_webhook, space, url, reason):
    installation = install_webhook(space=space, url=url)
    assert installation.status == "pending"
    (problem,) = [r for r in installation.status_reasons if r["path"] == "configuration.url"]
    assert reason in problem["message"]


def test_a_host_name_resolving_to_a_private_address_is_refused(monkeypatch):
    """DNS is outside this machine: a resolver answer is the one thing faked here."""
    real = socket.getaddrinfo

    def resolver(host, *args, **kwargs):
        if host == "internal.example.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.20.30.40", 80))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with pytest.raises(UnsafeURL, match=r"internal\.example\.test resolves to 10\.20\.30\.40"):
        check_url("http://internal.example.test/hook")


def test_every_resolved_address_must_be_public(monkeypatch):
    def resolver(host, *args, **kwargs):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 443)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with pytest.raises(UnsafeURL, match="loopback"):
        check_url("https://rebind.example.test/")


def test_allowed_networks_lift_the_block(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    target = check_url("http://127.0.0.1:9999/x")
    assert (target.address, target.port, target.scheme) == ("127.0.0.1", 9999, "http")
    with pytest.raises(UnsafeURL):
        check_url("http://10.0.0.1/x")


def test_public_addresses_pass(monkeypatch):
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443))],
    )
    target = check_url("https://hooks.example.com/in")
    assert (target.host, target.address, target.port) == ("hooks.example.com", "93.184.216.34", 443)
