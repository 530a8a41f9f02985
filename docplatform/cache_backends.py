"""The shared caches (``settings.cache``): Redis for production, Django's database cache for
the embedded default (``CACHE_URL`` unset), each with a counter that holds across processes.

Redis (``RedisCache``): Django's, with two costs of every request taken out. Django's makes a
new Redis client for each operation (about 60 µs: the client copies its table of reply
callbacks) where one per connection pool serves every thread; and a rate limit's count
(``rate_limits``) is one round trip here (``count``: INCR, and EXPIRE on the first, in one
script) where Django's ``add`` and ``incr`` take three (SET NX, EXISTS, INCR).

The database cache:

Django's reads the value, adds, and writes it back with the default timeout: two processes
counting one key at once both write n+1 (a rate limit then allows twice what it says), and a
counter's window is cut to the default timeout. Here the read and the write run in one
transaction holding the row (``SELECT ... FOR UPDATE`` on PostgreSQL; on SQLite the
transaction takes the write lock when it begins: ``settings.database``), and the expiry is
kept, as Redis's ``INCR`` does.
"""

import base64
import pickle

from django.core.cache.backends.db import DatabaseCache as DjangoDatabaseCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient
from django.db import connections, router, transaction
from django.utils import timezone


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
    process's pool opens connections of its own)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client

    def count(self, key, seconds: int) -> int:
        return int(self.get_client(key, write=True).eval(COUNT_SCRIPT, 1, key, seconds))


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient

    def count(self, key, seconds: int, version=None) -> int:
        """Add one to the counter ``key``, made (at 1) to live ``seconds`` when it did not
        exist; its new value. One round trip."""
        key = self.make_and_validate_key(key, version=version)
        return self._cache.count(key, seconds)
