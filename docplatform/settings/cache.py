"""The cache every web process shares (``CACHE_URL``), the sessions read through it, and how
long a CDN in front of the published sites may keep their pages.

What depends on it for correctness counts there: every rate limit and throttle (the sites',
the API's: ``docplatform.rate_limits``), so N processes allow what one allows; and the pages
kept there are keyed by what they show (a revision, a site's settings), never purged by hand.
Per-process memory is refused: two processes would each count, and keep, their own.

- unset (the embedded default): Django's database cache, in the table ``docplatform_cache``
  of ``DATABASE_URL``'s database (``manage.py migrate`` creates it: ``docplatform.apps``),
  with an increment that holds across processes (``docplatform.cache_backends``);
- ``redis://HOST:PORT/DB`` (or ``rediss://``): Redis, what production runs (every web process
  and machine on the same database), with a counter of one round trip, and the platform
  going on without it while it does not answer within ``CACHE_TIMEOUT_SECONDS``
  (``docplatform.cache_backends``);
- ``dbcache://TABLE``: the database cache in another table.
"""

from django.core.exceptions import ImproperlyConfigured

from .environment import env, env_number

#: The database cache's table, created by ``migrate`` on every database it migrates.
CACHE_TABLE = "docplatform_cache"
#: Entries the database cache holds before it culls the oldest keys.
DATABASE_CACHE_ENTRIES = 100_000
SHARED_CACHES = {
    "django.core.cache.backends.redis.RedisCache": "docplatform.cache_backends.RedisCache",
    "django.core.cache.backends.db.DatabaseCache": "docplatform.cache_backends.DatabaseCache",
}


def env_cache(name: str, default: str) -> dict:
    """A cache URL every process shares (Redis or the database), as Django's CACHES entry;
    anything else stops start-up naming the variable."""
    raw = env.ENVIRON.get(name) or default
    try:
        config = env.cache_url_config(raw)
    except (ValueError, KeyError):
        config = {}
    backend = SHARED_CACHES.get(config.get("BACKEND", ""))
    if backend is None:
        raise ImproperlyConfigured(
            f"{name} must be a cache every web process shares: redis://HOST:PORT/DB, "
            f"rediss://... or dbcache://TABLE, not {raw!r}"
        )
    config = {**config, "BACKEND": backend, "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", "")}
    if backend.endswith("RedisCache"):
        # A Redis that does not answer within this is taken for down (``cache_backends``:
        # the platform goes on without it) rather than holding the request; the operating
        # system's own connect timeout is minutes.
        seconds = env_number(float, "CACHE_TIMEOUT_SECONDS", 1.0, minimum=0.01)
        options = config.setdefault("OPTIONS", {})
        options.setdefault("socket_connect_timeout", seconds)
        options.setdefault("socket_timeout", seconds)
    if backend.endswith("DatabaseCache"):
        # Django culls a third of the table past 300 entries, rate counters included (a culled
        # counter starts again from 0): room for a busy embedded default instead.
        config.setdefault("OPTIONS", {}).setdefault("MAX_ENTRIES", DATABASE_CACHE_ENTRIES)
    return config


CACHES = {"default": env_cache("CACHE_URL", f"dbcache://{CACHE_TABLE}")}
# Signed-in pages read the session from the shared cache, the database row only when the
# cache lost it (written through to both).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# A public page of a published site (anonymous, nothing adaptive in it) tells shared caches
# (a CDN in front of SITES_URL) they may keep it SITE_CACHE_SECONDS (s-maxage) and serve it
# stale SITE_CACHE_STALE_SECONDS more while they fetch it again (stale-while-revalidate);
# browsers revalidate it at every view (max-age=0, ETag). 0: no shared cache keeps it.
SITE_CACHE_SECONDS = env_number(int, "SITE_CACHE_SECONDS", 60)
SITE_CACHE_STALE_SECONDS = env_number(int, "SITE_CACHE_STALE_SECONDS", 600)
