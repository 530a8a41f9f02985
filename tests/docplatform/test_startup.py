"""A wrong setting stops every process at start-up with one line naming the variable and the
value expected, exit code 2 and no traceback: ``manage.py`` (whatever the command), Celery's
worker and beat, and gunicorn serving ``docplatform.wsgi`` (which stops instead of booting
worker after worker)."""

import os
import sys

import pytest

from tests.processes import BIN, run

#: Production settings (DEBUG off), as a process started by an operator reads them.
PRODUCTION = {"DJANGO_SETTINGS_MODULE": "docplatform.settings"}
WRONG = [
    (
        "DATABASE_URL",
        "nonsense",
        "DATABASE_URL must be a database URL, postgres://USER:PASSWORD@HOST:PORT/NAME or "
        "sqlite:///PATH, not 'nonsense'",
    ),
    ("DEBUG", "maybe", "DEBUG must be true or false (yes/no, on/off, 1/0), not 'maybe'"),
    (
        "WEBHOOK_ALLOWED_NETWORKS",
        "127.0.0.0/8,10.0.0.0/33",
        "WEBHOOK_ALLOWED_NETWORKS must be comma-separated networks such as "
        "127.0.0.0/8,::1/128: '10.0.0.0/33' is not a network (CIDR)",
    ),
    ("WEBHOOK_BATCH_SIZE", "0", "WEBHOOK_BATCH_SIZE must be a number above 0, not '0'"),
    (
        "DELIVERY_LEASE_SECONDS",
        "soon",
        "DELIVERY_LEASE_SECONDS must be a number above 0, not 'soon'",
    ),
    (
        "TRUSTED_PROXY_COUNT",
        "-1",
        "TRUSTED_PROXY_COUNT must be a whole number of at least 0, not '-1'",
    ),
    (
        "WEBHOOK_RETRY_BASE_DELAY",
        "nan",
        "WEBHOOK_RETRY_BASE_DELAY must be a number of at least 0, not 'nan'",
    ),
    (
        "LOG_LEVEL",
        "loud",
        "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, not 'loud'",
    ),
]


def production_env(**environment: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"}
    return {**env, **PRODUCTION, **environment}


def assert_one_line(done, message: str, returncode: int = 2) -> None:
    assert done.returncode == returncode, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("error: ") == 1
    assert f"error: {message}\n" in done.stderr


@pytest.mark.parametrize(("name", "value", "message"), WRONG)
def test_manage_py_stops_with_one_line(name, value, message):
    done = run([sys.executable, "manage.py", "check"], production_env(**{name: value}))
    assert_one_line(done, message)
    assert done.stderr == f"error: {message}\n" and done.stdout == ""


@pytest.mark.slow
def test_every_command_stops_the_same_way():
    for command in (["migrate"], ["integration", "check", "."], ["help"], ["runserver"]):
        done = run([sys.executable, "manage.py", *command], production_env(DEBUG="maybe"))
        assert_one_line(done, WRONG[1][2])


@pytest.mark.slow
def test_a_setting_read_late_stops_the_command_the_same_way(tmp_path):
    """A key derived in development only is read when a command first needs it (checking
    code asks the runtime host, whose envelopes it signs): unset in production, the command
    stops with one line, not a traceback."""
    folder = tmp_path / "hello"
    made = run([sys.executable, "manage.py", "integration", "new", str(folder)], os.environ)
    assert made.returncode == 0, made.stderr
    env = production_env(
        DEBUG="false",
        PLATFORM_URL="https://docs.example.com",
        INTEGRATIONS_URL="https://integrations.example.net",
        SITES_URL="https://sites.example.org",
    )
    env.pop("RUNTIME_SIGNING_KEY", None)
    done = run([sys.executable, "manage.py", "integration", "check", str(folder)], env)
    assert_one_line(
        done,
        "RUNTIME_SIGNING_KEY is not set: it signs every envelope to the runtime host, and is "
        "derived from SECRET_KEY only in development (DEBUG=true)",
    )


def test_a_database_url_password_is_not_shown():
    done = run(
        [sys.executable, "manage.py", "check"],
        production_env(DATABASE_URL="postgress://app:s3cret@db.internal:5432/docs"),
    )
    assert done.returncode == 2
    assert "s3cret" not in done.stderr
    assert "not 'postgress://app:***@db.internal:5432/docs'" in done.stderr


@pytest.mark.parametrize("command", [["worker", "--pool", "solo"], ["beat"]])
@pytest.mark.parametrize(("name", "value", "message"), [WRONG[0], WRONG[2]])
def test_celery_stops_with_one_line(command, name, value, message):
    done = run(
        [str(BIN / "celery"), "-A", "docplatform", *command], production_env(**{name: value})
    )
    assert_one_line(done, message)


def test_gunicorn_stops_with_one_line_instead_of_booting_workers_again():
    done = run(
        [str(BIN / "gunicorn"), "--bind", "127.0.0.1:0", "docplatform.wsgi"],
        production_env(DEBUG="maybe"),
    )
    # gunicorn's own "App failed to load." path: the worker exits 4 and the server stops.
    assert_one_line(done, WRONG[1][2], returncode=4)
    assert "App failed to load." in done.stderr


def test_asgi_stops_with_one_line():
    done = run([sys.executable, "-c", "import docplatform.asgi"], production_env(DEBUG="maybe"))
    assert_one_line(done, WRONG[1][2], returncode=4)


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, "False [] INFO"),
        ({"DEBUG": "yes", "LOG_LEVEL": "debug"}, "True [] DEBUG"),
        ({"DEBUG": "Off", "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8, ::1/128"}, "False 2 INFO"),
        ({"DEBUG": "", "TRUSTED_PROXY_COUNT": "0"}, "False [] INFO"),
    ],
)
def test_good_values_are_read(environment, expected):
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "n = s.WEBHOOK_ALLOWED_NETWORKS; "
        "print(s.DEBUG, len(n) if n else n, s.LOGGING['root']['level'])"
    )
    done = run([sys.executable, "-c", code], production_env(**environment))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


@pytest.mark.slow
def test_a_lease_shorter_than_an_attempt_fails_the_checks():
    """The lease must outlast each consumer's longest hold (its timeouts): otherwise a
    delivery still being attempted is claimed again and sent twice. ``check`` (and
    ``migrate``, ``runserver``) say so, naming the setting and the value needed."""
    done = run(
        [sys.executable, "manage.py", "check"],
        production_env(DELIVERY_LEASE_SECONDS="15", WEBHOOK_RESPONSE_TIMEOUT="14"),
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert (
        "(docplatform.E100) DELIVERY_LEASE_SECONDS (15 s) is shorter than a delivery of the "
        "webhook consumer may be held (14.1 s, its timeouts) plus 2 s" in done.stderr
    )
    assert "Set DELIVERY_LEASE_SECONDS to 17 or more" in done.stderr
    assert "runtime consumer" in done.stderr  # 18 s: 3 to connect, 15 to answer

    done = run([sys.executable, "manage.py", "check"], production_env())
    assert done.returncode == 0, done.stderr  # the defaults: a 40 s lease
