"""``configurations``: levels, componentId or properties + required, and property definitions."""

from __future__ import annotations

import pytest

from .helpers import check, errors, manifest

P = "configurations.account.properties.p"


def prop(**fields):
    base = {"type": "string", "title": "Title", "description": "What it is."}
    base.update(fields)
    return base


def with_property(**fields):
    return manifest(configurations={"account": {"properties": {"p": prop(**fields)}}})


def test_full_configuration_is_normalized():
    configurations = {
        "account": {
            "properties": {
                "oauth_credentials": {
                    "type": "button",
                    "title": "Connection",
                    "description": "Authorize.",
                    "button_text": "Authorize",
                    "callback_url": "/oauth",
                },
                "channel": prop(completion_url="/channels"),
            },
            "required": ["oauth_credentials"],
        },
        "site": {
            "properties": {
                "region": prop(enum=["", "US", "EU"], default=""),
                "rate": {"type": "number", "title": "Rate", "description": "d", "default": 0.5},
                "count": {"type": "number", "title": "Count", "description": "d", "default": 3},
                "on": {"type": "boolean", "title": "On", "description": "d", "default": False},
                "free": prop(default="text"),
            }
        },
        "space": {"componentId": "configure"},
    }
    result = check(manifest(configurations=configurations))
    assert result.ok, errors(result)
    normalized = result.manifest.configurations
    assert normalized["account"] == configurations["account"]
    assert normalized["site"] == {
        "properties": configurations["site"]["properties"],
        "required": [],
    }
    assert normalized["space"] == {"componentId": "configure"}


def test_empty_properties_are_allowed():
    result = check(manifest(configurations={"site": {"properties": {}}}))
    assert result.ok
    assert result.manifest.configurations == {"site": {"properties": {}, "required": []}}


@pytest.mark.parametrize(
    ("configurations", "expected"),
    [
        (
            ["account"],
            ["configurations: must be a mapping of account, site and space, found a list"],
        ),
        (
            {"organization": {"properties": {}}, "acount": {"properties": {}}},
            [
                "configurations.organization: unknown key; the keys allowed here are account, "
                "site, space",
                "configurations.acount: unknown key; did you mean 'account'?",
            ],
        ),
        (
            {"site": None},
            [
                "configurations.site: must be a mapping with properties (and required) or "
                "componentId, found an empty value"
            ],
        ),
        (
            {"site": {"required": ["a"]}},
            [
                "configurations.site: needs properties (the settings to collect) or componentId "
                "(a component that renders the configuration screen)"
            ],
        ),
        (
            {"site": {"componentId": "configure", "properties": {}}},
            [
                "configurations.site.componentId: cannot be combined with properties or "
                "required: the configuration is either a component or a list of properties"
            ],
        ),
        ({"site": {"componentId": ""}}, ["configurations.site.componentId: must not be empty"]),
        (
            {"site": {"componentId": "my component"}},
            ["configurations.site.componentId: must not contain spaces; found 'my component'"],
        ),
        (
            {"site": {"properties": {}, "requried": []}},
            ["configurations.site.requried: unknown key; did you mean 'required'?"],
        ),
        (
            {"site": {"properties": ["a"]}},
            [
                "configurations.site.properties: must be a mapping of property names to "
                "definitions, found a list"
            ],
        ),
    ],
)
def test_configuration_shapes(configurations, expected):
    assert errors(check(manifest(configurations=configurations))) == expected


def test_required_rules():
    configurations = {
        "account": {
            "properties": {"api_key": prop(), "region": prop()},
            "required": ["api_key", "api_kee", "api_key", 7, "nothing"],
        }
    }
    assert errors(check(manifest(configurations=configurations))) == [
        "configurations.account.required[1]: 'api_kee' is not a property of this configuration; "
        "did you mean 'api_key'?",
        "configurations.account.required[2]: 'api_key' is listed twice (also at "
        "configurations.account.required[0])",
        "configurations.account.required[3]: must be a string, found a number; put the value in "
        "quotes to make it text",
        "configurations.account.required[4]: 'nothing' is not a property of this configuration",
    ]
    not_a_list = {"account": {"properties": {"a": prop()}, "required": "a"}}
    assert errors(check(manifest(configurations=not_a_list))) == [
        "configurations.account.required: must be a list of property names, found a string"
    ]


def test_property_names():
    configurations = {
        "site": {
            "properties": {
                "2fa": prop(),
                "has-dash": prop(),
                "ok_name": prop(),
                "camelCase": prop(),
                "x" * 65: prop(),
            }
        }
    }
    rule = "a property name must be letters, digits and underscores, not starting with a digit"
    assert errors(check(manifest(configurations=configurations))) == [
        f"configurations.site.properties.2fa: {rule}",
        f"configurations.site.properties.has-dash: {rule}",
        f"configurations.site.properties.{'x' * 65}: a property name may be at most 64 characters",
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"type": "text"},
            [f"{P}.type: must be one of string, number, boolean, button, found 'text'"],
        ),
        (
            {"type": "String"},
            [
                f"{P}.type: must be one of string, number, boolean, button, found 'String'; did "
                "you mean 'string'?"
            ],
        ),
        ({"title": ""}, [f"{P}.title: must not be empty"]),
        (
            {"description": 3},
            [
                f"{P}.description: must be a string, found a number; put the value in quotes to "
                "make it text"
            ],
        ),
        ({"defualt": "x"}, [f"{P}.defualt: unknown key; did you mean 'default'?"]),
        (
            {"format": "uri"},
            [
                f"{P}.format: unknown key; the keys allowed here are type, title, description, "
                "default, enum, completion_url, button_text, callback_url"
            ],
        ),
        (
            {"default": 5},
            [
                f"{P}.default: must be a string, found a number; put the value in quotes to make "
                "it text"
            ],
        ),
        ({"default": None}, [f"{P}.default: must be a string, found an empty value"]),
        ({"type": "number", "default": True}, [f"{P}.default: must be a number, found a boolean"]),
        ({"type": "number", "default": "5"}, [f"{P}.default: must be a number, found a string"]),
        ({"type": "number", "default": float("inf")}, [f"{P}.default: must be a finite number"]),
        ({"type": "number", "default": float("nan")}, [f"{P}.default: must be a finite number"]),
        (
            {"type": "boolean", "default": 1},
            [f"{P}.default: must be a boolean (true or false), found a number"],
        ),
        (
            {"type": "boolean", "default": "true"},
            [f"{P}.default: must be a boolean (true or false), found a string"],
        ),
        (
            {"type": "boolean", "default": None},
            [f"{P}.default: must be a boolean (true or false), found an empty value"],
        ),
        ({"enum": []}, [f"{P}.enum: must list at least one option"]),
        ({"enum": "a,b"}, [f"{P}.enum: must be a list of strings, found a string"]),
        ({"enum": ["a", "a"]}, [f"{P}.enum[1]: 'a' is listed twice (also at {P}.enum[0])"]),
        (
            {"enum": ["a", {"label": "B", "value": "b"}]},
            [f"{P}.enum[1]: must be a string, found a mapping"],
        ),
        (
            {"enum": ["a", "b"], "default": "c"},
            [f"{P}.default: 'c' is not one of the enum values ('a', 'b')"],
        ),
        (
            {"type": "number", "enum": ["1"]},
            [f"{P}.enum: is only allowed on string properties, not number"],
        ),
        (
            {"completion_url": "channels"},
            [
                f"{P}.completion_url: must be a path of the integration beginning with '/', such "
                "as '/channels'; found 'channels'"
            ],
        ),
        (
            {"completion_url": "https://x.com/c"},
            [
                f"{P}.completion_url: must be a path of the integration beginning with '/', such "
                "as '/channels'; found 'https://x.com/c'"
            ],
        ),
        (
            {"completion_url": "//evil.example/c"},
            [
                f"{P}.completion_url: must be a path of the integration beginning with '/', such "
                "as '/channels'; found '//evil.example/c'"
            ],
        ),
        (
            {"completion_url": "/c", "enum": ["a"]},
            [
                f"{P}.completion_url: cannot be combined with enum: the options come either from "
                "the fixed list or from the endpoint"
            ],
        ),
        (
            {"type": "boolean", "completion_url": "/c"},
            [f"{P}.completion_url: is only allowed on string properties, not boolean"],
        ),
        (
            {"button_text": "Go"},
            [f"{P}.button_text: is only allowed on button properties, not string"],
        ),
        (
            {"callback_url": "/oauth"},
            [f"{P}.callback_url: is only allowed on button properties, not string"],
        ),
        (
            {"type": "button"},
            [
                f"{P}.button_text: is required for a button property",
                f"{P}.callback_url: is required for a button property",
            ],
        ),
        (
            {"type": "button", "button_text": "", "callback_url": "oauth", "default": "x"},
            [
                f"{P}.default: a button property has no default value",
                f"{P}.button_text: must not be empty",
                f"{P}.callback_url: must be a path of the integration beginning with '/', such as "
                "'/oauth'; found 'oauth'",
            ],
        ),
    ],
)
def test_property_rules(fields, expected):
    assert errors(check(with_property(**fields))) == expected


@pytest.mark.parametrize("missing", ["type", "title", "description"])
def test_property_needs_type_title_description(missing):
    definition = prop()
    del definition[missing]
    configurations = {"account": {"properties": {"p": definition}}}
    assert errors(check(manifest(configurations=configurations))) == [f"{P}.{missing}: is required"]


def test_property_must_be_a_mapping():
    configurations = {"account": {"properties": {"p": "string"}}}
    assert errors(check(manifest(configurations=configurations))) == [
        f"{P}: must be a mapping with type, title and description, found a string"
    ]


@pytest.mark.parametrize(
    "fields",
    [
        {"type": "number", "default": 0},
        {"type": "number", "default": -2.5},
        {"type": "boolean", "default": True},
        {"type": "string", "default": ""},
        {"type": "string", "enum": ["US", "EU"]},
        {"type": "string", "enum": ["US", "EU"], "default": "EU"},
        {"type": "string", "completion_url": "/channels?kind=all"},
        {"type": "button", "button_text": "Authorize", "callback_url": "/oauth"},
    ],
)
def test_good_properties(fields):
    result = check(with_property(**fields))
    assert result.ok, errors(result)
