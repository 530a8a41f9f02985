"""The database: ``DATABASE_URL`` selects PostgreSQL (psycopg 3); unset, SQLite in VAR_DIR.

SQLite is tuned so the web and worker processes share one file; PostgreSQL connections are
kept across requests and tasks.
"""

from .base import VAR_DIR
from .environment import env_database, env_flag, env_number

DATABASES = {"default": env_database("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web and worker processes share one SQLite file;
    # IMMEDIATE transactions take the write lock up front instead of failing mid-way.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )
else:
    # Connections outlive a request or a task: a new PostgreSQL backend costs milliseconds
    # of CPU on both sides. A broken one is replaced at the next request or task.
    DATABASES["default"]["CONN_MAX_AGE"] = env_number(int, "DATABASE_CONN_MAX_AGE", 300)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
#: The hot paths' compiled statements (docplatform.queries) run as prepared statements on
#: PostgreSQL; off behind a pooler that does not keep them (PgBouncer before 1.21 in
#: transaction mode).
DATABASE_PREPARED_STATEMENTS = env_flag("DATABASE_PREPARED_STATEMENTS", True)
#: Whether processes hear of changed rows from PostgreSQL (``docplatform.change_feed``,
#: LISTEN/NOTIFY on a connection of each web process's own), so that a public endpoint's call
#: reads its installation only when it changed. Off behind a pooler that does not keep a
#: session's LISTEN (PgBouncer in transaction mode); the feed finds that out and stays off.
DATABASE_CHANGE_FEED = env_flag("DATABASE_CHANGE_FEED", True)
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
