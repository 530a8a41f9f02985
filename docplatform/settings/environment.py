"""Reading the environment: the ``env`` every settings module reads (the process environment
over an optional ``.env`` beside manage.py), and the readers that refuse a bad value.

Each reader raises ImproperlyConfigured with one line naming the variable and what it must be;
``docplatform.startup`` prints that line and exits 2.
"""

import ipaddress
import math
import os
import re
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured
from dotenv import dotenv_values

#: The project's folder (manage.py, the optional .env, templates/, var/).
BASE_DIR = Path(__file__).resolve().parent.parent.parent

# The optional .env feeds these settings only: it is not copied into os.environ, so it never
# leaks into what integration secrets are resolved from. The process environment wins.
env = environ.Env()
env.ENVIRON = {**dotenv_values(BASE_DIR / ".env"), **os.environ}


def env_positive(cast, name: str, default):
    """A setting that must be a number above zero; anything else stops start-up with an
    error naming the variable."""
    raw = env.ENVIRON.get(name)
    try:
        value = default if raw is None else cast(raw)
    except ValueError:
        value = None
    if value is None or not 0 < value < math.inf:
        raise ImproperlyConfigured(f"{name} must be a number above 0, not {raw!r}")
    return value


def env_number(cast, name: str, default, *, minimum=0):
    """A number setting of at least ``minimum`` (0 allowed by default); anything else stops
    start-up with an error naming the variable and what it must be."""
    raw = env.ENVIRON.get(name)
    try:
        value = default if raw is None else cast(raw)
    except ValueError:
        value = None
    if value is None or not minimum <= value < math.inf:
        kind = "a whole number" if cast is int else "a number"
        raise ImproperlyConfigured(f"{name} must be {kind} of at least {minimum}, not {raw!r}")
    return value


BOOLEANS = {"true": True, "yes": True, "on": True, "1": True}
BOOLEANS |= {"false": False, "no": False, "off": False, "0": False}


def env_flag(name: str, default: bool) -> bool:
    """A yes/no setting (unset or empty: ``default``); anything else stops start-up, where
    django-environ would read it as false."""
    raw = env.ENVIRON.get(name)
    if raw is None or not raw.strip():
        return default
    if raw.strip().lower() not in BOOLEANS:
        raise ImproperlyConfigured(
            f"{name} must be true or false (yes/no, on/off, 1/0), not {raw!r}"
        )
    return BOOLEANS[raw.strip().lower()]


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (case-insensitive); anything else stops start-up naming them."""
    raw = env.ENVIRON.get(name)
    if raw is None:
        return default
    if raw.strip().upper() not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {raw!r}")
    return raw.strip().upper()


DATABASE_ENGINES = ("django.db.backends.postgresql", "django.db.backends.sqlite3")


def env_database(name: str, default: str) -> dict:
    """A database URL for PostgreSQL or SQLite, as Django's DATABASES entry; anything else
    stops start-up naming the variable (the value is shown without its password)."""
    raw = env.ENVIRON.get(name, default)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # django-environ warns, then returns no ENGINE
        try:
            config = environ.Env.db_url_config(raw)
        except ValueError:  # e.g. a port that is not a number
            config = {}
    if config.get("ENGINE") not in DATABASE_ENGINES:
        shown = re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", raw)
        raise ImproperlyConfigured(
            f"{name} must be a database URL, postgres://USER:PASSWORD@HOST:PORT/NAME or "
            f"sqlite:///PATH, not {shown!r}"
        )
    return config


def env_networks(name: str) -> list[str]:
    """Comma-separated CIDRs; one that is not a network stops start-up naming it."""
    cidrs = env.list(name, default=[])
    for cidr in cidrs:
        try:
            ipaddress.ip_network(cidr.strip(), strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must be comma-separated networks such as 127.0.0.0/8,::1/128: "
                f"{cidr.strip()!r} is not a network (CIDR)"
            ) from None
    return cidrs


def env_rate(name: str, default: str) -> str:
    """A rate such as ``30/minute`` (per second, minute, hour or day); anything else stops
    start-up naming the variable."""
    raw = env.str(name, default=default).strip()
    if not re.fullmatch(r"[1-9][0-9]{0,8}/(second|minute|hour|day)", raw):
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per second, minute, hour or day, such as "
            f"30/minute, not {raw!r}"
        )
    return raw


def origin_host(name: str, url: str) -> str:
    """The host of a ``scheme://host[:port]`` setting; anything else stops start-up."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ImproperlyConfigured(f"{name} must be http(s)://host[:port], not {url!r}")
    return parts.hostname.rstrip(".").lower()


def check_separate_origins(name: str, url: str, others: dict[str, str], *, production: bool):
    """The host of setting ``name`` must not be the host of any setting in ``others`` (their
    names and values); in production not a parent or a child domain of it either (a cookie
    set for one with ``Domain=`` would reach the other)."""
    host = origin_host(name, url)
    for other, other_url in others.items():
        other_host = origin_host(other, other_url)
        related = host.endswith("." + other_host) or other_host.endswith("." + host)
        if host == other_host or (production and related):
            raise ImproperlyConfigured(
                f"{name} ({url}) must be on another domain than {other} ({other_url}): not "
                "the same host, nor a parent or child domain of it"
            )
