"""Visitor tokens as integrations sign them, and the visitor handlers' calls (the SDK alone)."""

import json
import time

import jwt
import pytest
from docplatform_sdk import (
    Context,
    Response,
    VisitorSigningError,
    create_integration,
    sign_visitor_token,
    visitor_return_url,
)
from docplatform_sdk.dispatch import Dispatcher, IntegrationContractError

KEY = "k" * 43
SITE = {"id": "Site1", "url": "https://sites.example/Site1/", "visitorSigningKey": KEY}


def test_a_token_is_hs256_for_the_site_short_lived_and_unique():
    context = Context({"site": SITE})
    token = sign_visitor_token({"plan": "pro"}, context, expires_in=60)
    payload = jwt.decode(token, KEY.encode(), algorithms=["HS256"], audience="Site1")
    assert payload["claims"] == {"plan": "pro"}
    assert payload["exp"] - payload["iat"] == 60
    assert abs(payload["iat"] - time.time()) < 5
    assert (
        payload["jti"]
        != jwt.decode(
            sign_visitor_token({}, context), KEY.encode(), algorithms=["HS256"], audience="Site1"
        )["jti"]
    )
    with pytest.raises(TypeError):
        sign_visitor_token(["plan"], context)
    with pytest.raises(ValueError):
        sign_visitor_token({}, context, expires_in=0)


def test_without_the_sites_key_nothing_is_signed():
    for environment in ({}, {"site": {"id": "Site1", "url": SITE["url"]}}):
        with pytest.raises(VisitorSigningError, match="site:visitor:auth"):
            sign_visitor_token({}, Context(environment))


def test_the_visitor_goes_back_to_the_sites_address_only():
    context = Context({"site": SITE})
    back = visitor_return_url("https://sites.example/Site1/Sp/intro?lang=en", "T", context)
    assert back == "https://sites.example/Site1/Sp/intro?lang=en&visitor_token=T"
    assert visitor_return_url("https://evil.example/", "T", context) == (
        "https://sites.example/Site1/?visitor_token=T"
    )


@pytest.mark.slow
def test_the_visitor_handlers_are_dispatched():
    integration = create_integration(
        visitor_authentication=lambda request, context: Response.redirect(
            "https://idp.example/?back=" + request.query["location"]
        ),
        visitor_claims=lambda event, context: {"plan": "pro", "had": dict(event.claims)},
    )
    assert integration.handlers == ["visitor_authentication", "visitor_claims"]
    dispatcher = Dispatcher(integration)
    request = {"method": "GET", "url": "https://i.example/visitor-auth/I1?location=L"}
    answer = dispatcher.dispatch({"type": "visitor_authentication", "request": request}, {}, b"")
    assert answer.status == 302
    assert ("Location", "https://idp.example/?back=L") in answer.headers
    claims = dispatcher.dispatch({"type": "visitor_claims", "claims": {"sub": "v"}}, {}, None)
    assert json.loads(claims.body)["claims"] == {"plan": "pro", "had": {"sub": "v"}}


@pytest.mark.slow
def test_missing_or_wrong_visitor_handlers():
    dispatcher = Dispatcher(create_integration())
    request = {"method": "GET", "url": "https://i.example/"}
    answer = dispatcher.dispatch({"type": "visitor_authentication", "request": request}, {}, b"")
    assert answer.status == 404
    claims = dispatcher.dispatch({"type": "visitor_claims", "claims": {}}, {}, None)
    assert json.loads(claims.body) == {"claims": {}, "handled": False}
    wrong = Dispatcher(create_integration(visitor_claims=lambda event, context: ["pro"]))
    with pytest.raises(IntegrationContractError, match="must return a dict"):
        wrong.dispatch({"type": "visitor_claims", "claims": {}}, {}, None)
    with pytest.raises(TypeError, match="visitor_authentication must be a function"):
        create_integration(visitor_authentication="nope")
