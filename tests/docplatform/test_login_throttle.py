"""The login throttle (django-axes): the marketplace's and the admin's sign-in pages lock
after LOGIN_FAILURE_LIMIT failures, from one address or for one username, and the lockout
page says when to try again."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.utils import timezone

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

MARKETPLACE_LOGIN = "/marketplace/login/"
ADMIN_LOGIN = "/admin/login/"
PASSWORD = "the-right-password"
ADDRESS = "203.0.113.5"


@pytest.fixture
def alice(db):
    user = UserFactory(username="alice", is_staff=True)
    user.set_password(PASSWORD)
    user.save()
    return user


def sign_in(client, password, *, page=MARKETPLACE_LOGIN, username="alice", address=ADDRESS):
    return client.post(page, {"username": username, "password": password}, REMOTE_ADDR=address)


def fail(client, times, **where):
    for _ in range(times):
        response = sign_in(client, "a-wrong-guess", **where)
        assert response.status_code in (200, 429)
    return response


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_the_failure_before_the_limit_is_an_ordinary_wrong_password(client, alice):
    response = fail(client, settings.AXES_FAILURE_LIMIT - 1)
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_the_limit_locks_and_the_page_says_when_to_retry(client, alice):
    response = fail(client, settings.AXES_FAILURE_LIMIT)
    assert response.status_code == 429
    minutes = settings.AXES_COOLOFF_TIME.total_seconds() / 60
    assert abs(int(response["Retry-After"]) - minutes * 60) <= 2
    page = response.content.decode()
    assert f"locked after {settings.AXES_FAILURE_LIMIT} failed attempts" in page
    assert f"Try again in {minutes:.0f}\xa0minutes" in page
    retry_at = timezone.now() + settings.AXES_COOLOFF_TIME
    assert (
        retry_at.strftime("%H:%M") in page
        or (retry_at - timedelta(minutes=1)).strftime("%H:%M") in page
    )

    # Even the right password is refused while locked.
    locked = sign_in(client, PASSWORD)
    assert locked.status_code == 429
    assert not signed_in(client)


def test_the_admin_login_is_locked_by_failures_on_either_page(client, alice):
    fail(client, settings.AXES_FAILURE_LIMIT - 1)
    response = sign_in(client, "one-more-guess", page=ADMIN_LOGIN)
    assert response.status_code == 429
    assert "Too many sign-in attempts" in response.content.decode()
    assert sign_in(client, PASSWORD, page=ADMIN_LOGIN).status_code == 429
    assert not signed_in(client)


def test_one_address_is_locked_whatever_username_it_tries(client, alice):
    for number in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "guess", username=f"user{number}")
    assert sign_in(client, PASSWORD).status_code == 429


def test_one_username_is_locked_whatever_address_guesses(client, alice):
    for number in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, "guess", address=f"198.51.100.{number + 1}")
    assert sign_in(client, PASSWORD, address="192.0.2.77").status_code == 429
    # Another account, from an address that never failed, signs in.
    bob = UserFactory(username="bob")
    bob.set_password(PASSWORD)
    bob.save()
    response = sign_in(client, PASSWORD, username="bob", address="192.0.2.78")
    assert response.status_code == 302
    assert signed_in(client)


def test_guesses_during_the_lockout_do_not_extend_it(client, alice):
    fail(client, settings.AXES_FAILURE_LIMIT)
    ten_minutes_ago = timezone.now() - timedelta(minutes=10)
    AccessAttempt.objects.update(attempt_time=ten_minutes_ago)
    response = fail(client, 3)
    assert response.status_code == 429
    left = settings.AXES_COOLOFF_TIME - timedelta(minutes=10)
    assert abs(int(response["Retry-After"]) - left.total_seconds()) <= 2
    assert AccessAttempt.objects.get().failures_since_start == settings.AXES_FAILURE_LIMIT


def test_after_the_cool_off_the_right_password_signs_in(client, alice):
    fail(client, settings.AXES_FAILURE_LIMIT)
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    response = sign_in(client, PASSWORD)
    assert response.status_code == 302
    assert signed_in(client)


def test_the_limit_is_a_setting(client, alice, settings):
    settings.AXES_FAILURE_LIMIT = 2
    assert fail(client, 1).status_code == 200
    assert fail(client, 1).status_code == 429
