"""The embedded default's shared cache (``CACHE_URL`` unset, ``settings.cache``): Django's
database cache, whose ``incr`` holds across processes.

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
