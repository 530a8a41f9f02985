"""The ``network`` extension key: the hosts integration code may call besides the platform's
API, and the warning for a script that declares none."""

import pytest

from .command_line import console, write
from .helpers import check, errors, manifest, warnings

FETCH_UNDECLARED = (
    "network.fetch: not declared, so the code may call only this platform's API; to call "
    'other hosts, declare them: network.fetch: ["api.example.com"] (or ["*"] for any public '
    "host); network.fetch: [] says it calls none"
)


def test_declared_hosts_are_kept_without_duplicates():
    result = check(
        manifest(network={"fetch": ["api.github.com", "*.example.com", "api.github.com"]})
    )
    assert result.ok, errors(result)
    assert result.manifest.network_fetch == ("api.github.com", "*.example.com")


def test_no_network_key_is_kept_as_not_declared():
    assert check(manifest()).manifest.network_fetch is None


def test_a_star_alone_declares_any_public_host():
    result = check(manifest(network={"fetch": ["*"]}))
    assert result.ok, errors(result)
    assert result.manifest.network_fetch == ("*",)


@pytest.mark.parametrize("network", [None, {}])
def test_a_script_without_network_fetch_is_warned_how_to_declare_hosts(network):
    document = manifest(script="main.py")
    if network is not None:
        document["network"] = network
    assert warnings(check(document)) == [FETCH_UNDECLARED]


@pytest.mark.parametrize("network", [{"fetch": []}, {"fetch": ["*"]}, {"fetch": ["a.com"]}])
def test_a_script_that_declares_its_hosts_is_not_warned(network):
    assert warnings(check(manifest(script="main.py", network=network))) == []


def test_a_manifest_without_a_script_calls_nothing_and_is_not_warned():
    assert warnings(check(manifest())) == []


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
            "network.fetch[0]: 'api.*.com' is not a host name ('*.' may only start it; "
            "'*' alone means any public host)",
        ),
        (
            {"fetch": ["*", "api.github.com"]},
            "network.fetch: '*' already means any public host: list it alone",
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


def test_check_on_the_command_line_warns_and_accepts(tmp_path):
    """``docplatform-integration check`` as an author runs it: the warning first, exit 0."""
    code = "from docplatform_sdk import create_integration\n\nintegration = create_integration()\n"
    folder = write(tmp_path / "hello", {"script": "main.py"}, {"main.py": code})
    result = console("check", str(folder))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"warning: {FETCH_UNDECLARED}",
        "hello: the manifest is valid",
    ]
