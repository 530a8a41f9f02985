"""The shared caches (``settings.cache``): Redis for production, Django's database cache for
the embedded default (``CACHE_URL`` unset), each with a counter that holds across processes.

Redis (``RedisCache``): Django's, with two costs of every request taken out. Django's makes a
new Redis client for each operation (about 60 µs: the client copies its table of reply
callbacks) where one per connection pool serves every thread; and a rate limit's count
(``rate_limits``) is one round trip here (``count``: INCR, and EXPIRE on the first, in one
script) where Django's ``add`` and ``incr`` take three (SET NX, EXISTS, INCR).

When Redis does not answer (stopped, unreachable, or slower than ``CACHE_TIMEOUT_SECONDS``),
the platform goes on without it rather than answer 500 to every request: a read is a miss, a
write is dropped, ``add`` answers True (its caller goes on as the first), and a rate limit's
count is 1: the limits fail open, as Sentry's do (a throttle protects the product; it is not
the product). Sessions, written through to the database (``cached_db``), stay signed in. It
logs one warning when Redis stops answering and one line when it answers again; meanwhile it
is tried again every ``OUTAGE_RETRY_SECONDS``, so a request waits on a Redis that is down at
most once per interval and process.

The database cache:

Django's reads the value, adds, and writes it back with the default timeout: two processes
counting one key at once both write n+1 (a rate limit then allows twice what it says), and a
counter's window is cut to the default timeout. Here the read and the write run in one
transaction holding the row (``SELECT ... FOR UPDATE`` on PostgreSQL; on SQLite the
transaction takes the write lock when it begins: ``settings.database``), and the expiry is
kept, as Redis's ``INCR`` does.
"""

import base64
import logging
import pickle
import threading
import time

from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient
from django.db import connections, router, transaction
from django.utils import timezone
from redis.exceptions import RedisError

logger = logging.getLogger("docplatform.cache")

#: After Redis failed to answer, how long the cache goes without it before trying it again.
OUTAGE_RETRY_SECONDS = 5.0


class DatabaseCache(DjangoDatabaseCache):
    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        now = connection.ops.adapt_datetimefield_value(timezone.now().replace(microsecond=0))
        with transaction.atomic(using=db), connection.cursor() as cursor:
            cursor.execute(
                f"SELECT value FROM {table} WHERE cache_key = %s AND expires > %s{lock}",  # noqa: S608
                [key, now],
            )
            row = cursor.fetchone()
            if row is None:
                raise ValueError(f"Key '{key}' not found")
            stored = connection.ops.process_clob(row[0])
            value = pickle.loads(base64.b64decode(stored.encode())) + delta  # noqa: S301
            pickled = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
            cursor.execute(
                f"UPDATE {table} SET value = %s WHERE cache_key = %s",  # noqa: S608
                [pickled, key],
            )
        return value

    def decr(self, key, delta=1, version=None):
        return self.incr(key, -delta, version)


#: A counter's increment and, when it was just made, its expiry: atomic in Redis.
COUNT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""


class RedisCacheClient(DjangoRedisCacheClient):
    """One Redis client per connection pool, made once (clients are thread-safe; a forked
    process's pool opens connections of its own); each operation goes on without Redis while
    it does not answer (the module's docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._down_until = 0.0  # while Redis does not answer: when to try it again
        self._outage = threading.Lock()

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client

    def _or(self, degraded, operation, *args):
        """``operation(*args)``'s answer, or ``degraded`` while Redis does not answer."""
        if self._down_until and time.monotonic() < self._down_until:
            return degraded
        try:
            answer = operation(*args)
        except RedisError as error:
            with self._outage:
                if not self._down_until:
                    logger.warning(
                        "the shared cache (Redis) does not answer (%s): going on without it "
                        "(nothing cached, rate limits not counted); trying it again every "
                        "%g s",
                        error,
                        OUTAGE_RETRY_SECONDS,
                    )
                self._down_until = time.monotonic() + OUTAGE_RETRY_SECONDS
            return degraded
        if self._down_until:
            with self._outage:
                if self._down_until:
                    self._down_until = 0.0
                    logger.warning("the shared cache (Redis) answers again")
        return answer

    def get(self, key, default):
        return self._or(default, super().get, key, default)

    def get_many(self, keys):
        return self._or({}, super().get_many, keys)

    def has_key(self, key):
        return self._or(False, super().has_key, key)

    def set(self, key, value, timeout):
        return self._or(None, super().set, key, value, timeout)

    def set_many(self, data, timeout):
        return self._or(None, super().set_many, data, timeout)

    def add(self, key, value, timeout):
        return self._or(True, super().add, key, value, timeout)

    def touch(self, key, timeout):
        return self._or(False, super().touch, key, timeout)

    def delete(self, key):
        return self._or(False, super().delete, key)

    def delete_many(self, keys):
        return self._or(None, super().delete_many, keys)

    def count(self, key, seconds: int) -> int:
        return self._or(1, self._count, key, seconds)

    def _count(self, key, seconds: int) -> int:
        return int(self.get_client(key, write=True).eval(COUNT_SCRIPT, 1, key, seconds))


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient

    def count(self, key, seconds: int, version=None) -> int:
        """Add one to the counter ``key``, made (at 1) to live ``seconds`` when it did not
        exist; its new value (1 while Redis does not answer). One round trip."""
        key = self.make_and_validate_key(key, version=version)
        return self._cache.count(key, seconds)
