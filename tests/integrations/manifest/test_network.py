"""The ``network`` extension key: the hosts ``context.fetch`` may reach."""

import pytest

from .helpers import check, errors, manifest


def test_declared_hosts_are_kept_without_duplicates():
    result = check(
        manifest(network={"fetch": ["api.github.com", "*.example.com", "api.github.com"]})
    )
    assert result.ok, errors(result)
    assert result.manifest.network_fetch == ("api.github.com", "*.example.com")


def test_no_network_key_means_any_public_host():
    assert check(manifest()).manifest.network_fetch is None


def test_an_empty_list_means_no_host():
    assert check(manifest(network={"fetch": []})).manifest.network_fetch == ()


@pytest.mark.parametrize(
    ("network", "expected"),
    [
        ("api.github.com", "network: must be a mapping with fetch: [host names], found a string"),
        ({"fetch": "api.github.com"}, "network.fetch: must be a list of hosts, found a string"),
        (
            {"fetch": ["https://api.github.com"]},
            "network.fetch[0]: a host name only, without scheme, port or path: "
            "'https://api.github.com'",
        ),
        (
            {"fetch": ["api.github.com:443"]},
            "network.fetch[0]: a host name only, without scheme, port or path: "
            "'api.github.com:443'",
        ),
        (
            {"fetch": ["API.GitHub.com"]},
            "network.fetch[0]: write host names in lower case without spaces: 'api.github.com'",
        ),
        (
            {"fetch": ["api.*.com"]},
            "network.fetch[0]: 'api.*.com' is not a host name ('*.' may only start it)",
        ),
        (
            {"fetch": [7]},
            "network.fetch[0]: must be a host name such as 'api.example.com' or "
            "'*.example.com', not 7",
        ),
        ({"fetch": ["a.com"], "fecth": []}, "network.fecth: unknown key; did you mean 'fetch'?"),
    ],
)
def test_bad_network_declarations_name_the_field(network, expected):
    assert expected in errors(check(manifest(network=network)))
