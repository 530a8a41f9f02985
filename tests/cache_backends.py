"""The test run's cache on Redis (``TEST_REDIS_URL``, tests/settings.py): the platform's Redis
cache (``docplatform.cache_backends``) whose ``clear`` deletes the keys under the run's prefix
only, where Django's empties the whole Redis database (``FLUSHDB``), which the run did not
make."""

from docplatform.cache_backends import RedisCache
from tests.redis_keys import delete_keys


class RunRedisCache(RedisCache):
    def clear(self):
        delete_keys(self._servers[0], f"{self.key_prefix}:")
        return True
