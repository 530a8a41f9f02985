"""The SDK's values: markup, requests and responses, the environment, declarations."""

import pytest
from docplatform_sdk import (
    Context,
    Request,
    Response,
    block,
    button,
    create_component,
    create_integration,
    link,
    select,
    switch,
    text,
    text_input,
)
from docplatform_sdk.jsonobject import JSONObject


def test_markup_is_plain_json():
    assert block(text("Hi"), button("Go", on_press={"action": "go", "id": 3})) == {
        "type": "block",
        "children": [
            {"type": "text", "text": "Hi"},
            {"type": "button", "label": "Go", "onPress": {"action": "go", "id": 3}},
        ],
    }
    assert link("Docs", "https://example.com") == {
        "type": "link",
        "label": "Docs",
        "url": "https://example.com",
    }


def test_configuration_inputs():
    assert text_input("url", label="URL", placeholder="https://") == {
        "type": "text_input",
        "name": "url",
        "label": "URL",
        "value": "",
        "placeholder": "https://",
    }
    assert select("color", ["red", {"value": "b", "label": "Blue"}], value="red") == {
        "type": "select",
        "name": "color",
        "options": [{"value": "red", "label": "red"}, {"value": "b", "label": "Blue"}],
        "value": "red",
    }
    assert switch("on", label="On", value=True, on_change={"action": "toggle"}) == {
        "type": "switch",
        "name": "on",
        "label": "On",
        "value": True,
        "onChange": {"action": "toggle"},
    }


def test_an_action_must_name_itself():
    with pytest.raises(ValueError, match="action"):
        button("Go", on_press="go")


def test_request_reads_its_url_and_body():
    request = Request(
        "post",
        "https://p.example/i/1/hook?a=1&b=&a=2",
        {"Content-Type": "application/json; charset=latin-1"},
        '{"name": "é"}'.encode("latin-1"),
    )
    assert request.method == "POST"
    assert request.path == "/i/1/hook"
    assert request.route == "/i/1/hook"
    assert request.query == {"a": "2", "b": ""}
    assert request.headers["content-type"].startswith("application/json")
    assert request.text() == '{"name": "é"}'


def test_response_helpers_build_and_read():
    response = Response.json({"ok": True}, status=201, headers={"X-A": "1"})
    assert (response.status, response.headers["content-type"]) == (201, "application/json")
    assert response.json() == {"ok": True}
    assert Response.text("hé").text() == "hé"
    redirect = Response.redirect("https://example.com/next")
    assert (redirect.status, redirect.headers["Location"]) == (302, "https://example.com/next")
    assert Response(204).body == b""
    with pytest.raises(ValueError):
        Response(99)
    with pytest.raises(TypeError):
        Response(200, body={"not": "bytes"})


def test_the_environment_reads_as_attributes_with_every_key():
    context = Context(
        {
            "apiEndpoint": "https://api.example/v1",
            "apiTokens": {"integration": "int-token"},
            "integration": {"name": "x", "urls": {"publicEndpoint": "https://rt/integrations/x"}},
            "spaceInstallation": {"space": "s1", "urls": {"publicEndpoint": "https://p/s1"}},
        }
    )
    environment = context.environment
    assert environment.integration.urls.publicEndpoint == "https://rt/integrations/x"
    assert environment.installation is None and environment.siteInstallation is None
    assert environment.secrets == {}
    assert environment.spaceInstallation.space == "s1"
    assert environment.installation_endpoint == "https://p/s1"
    assert context.api.token == "int-token"
    with pytest.raises(AttributeError):
        environment.integration.missing  # noqa: B018


def test_json_objects_wrap_nested_values():
    value = JSONObject({"a": [{"b": 1}]})
    value["c"] = {"d": 2}
    assert value.a[0].b == 1 and value.c.d == 2


def test_declarations_are_checked():
    component = create_component("c", render=lambda element, context: block())
    integration = create_integration(components=[component], events={"space_view": print})
    assert integration.components == {"c": component}
    with pytest.raises(ValueError, match="two components"):
        create_integration(components=[component, component])
    with pytest.raises(TypeError, match="fetch must be a function"):
        create_integration(fetch="nope")
    with pytest.raises(TypeError, match="space_view"):
        create_integration(events={"space_view": 1})
    with pytest.raises(TypeError, match="render"):
        create_component("c", render=None)
