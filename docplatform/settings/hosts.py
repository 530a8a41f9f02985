"""The three hosts the platform serves, each on an origin of its own: the platform
(``PLATFORM_URL``), the integrations' public endpoints (``INTEGRATIONS_URL``) and the published
sites (``SITES_URL``); what a site's visitors may send per address; the hosts admitted."""

from urllib.parse import urlsplit

from .base import ALLOWED_HOSTS, DEBUG
from .environment import check_separate_origins, env, env_positive, env_rate

# Where the platform is reached from outside (the API endpoint and installations' public
# endpoints given to integration code) and where the runtime host listens.
PLATFORM_URL = env.str("PLATFORM_URL", default="http://127.0.0.1:8000").rstrip("/")
# The origin of the integrations' public endpoints (DESIGN.md, "Trust boundaries" 3): another
# host than the platform's, so no platform cookie reaches integration code and nothing it
# answers runs on, or sets cookies for, the platform's origin. One process serves both hosts.
INTEGRATIONS_URL = env.str("INTEGRATIONS_URL", default="http://localhost:8000").rstrip("/")
check_separate_origins(
    "INTEGRATIONS_URL", INTEGRATIONS_URL, {"PLATFORM_URL": PLATFORM_URL}, production=not DEBUG
)
# The origin of published sites (DESIGN.md, "The documentation product"): anonymous visitors,
# the site's own visitor cookie, nothing of the platform's. Another host than the platform's
# and the integrations' (development: another loopback address, which `make run` also serves).
SITES_URL = env.str("SITES_URL", default="http://127.0.0.2:8000").rstrip("/")
check_separate_origins(
    "SITES_URL",
    SITES_URL,
    {"PLATFORM_URL": PLATFORM_URL, "INTEGRATIONS_URL": INTEGRATIONS_URL},
    production=not DEBUG,
)

# What a published site's visitors may send, per client address (docplatform/visitor_rates.py,
# counted in the shared cache: every web process counts the same requests): page feedback (the
# site's form and the beacon's), presses of blocks made for visitors and searches (a site's, and
# the platform's search of a person's spaces); over it they get a 429 saying when to try again.
SITE_RATES = {
    "feedback": env_rate("SITE_FEEDBACK_RATE", "20/minute"),
    "blocks": env_rate("SITE_BLOCK_PRESS_RATE", "60/minute"),
    "search": env_rate("SITE_SEARCH_RATE", "60/minute"),
}
# An authenticated site (README, "Visitor authentication"): a visitor token may live at most
# VISITOR_TOKEN_MAX_AGE seconds (its exp past that is refused: the used ids are kept that
# long), and the site's session cookie it starts lasts SITE_VISITOR_SESSION_AGE seconds.
VISITOR_TOKEN_MAX_AGE = env_positive(int, "VISITOR_TOKEN_MAX_AGE", 600)
SITE_VISITOR_SESSION_AGE = env_positive(int, "SITE_VISITOR_SESSION_AGE", 8 * 3600)
# The three hosts are served: admit them without repeating them in ALLOWED_HOSTS.
for _url in (PLATFORM_URL, INTEGRATIONS_URL, SITES_URL):
    _host = urlsplit(_url).hostname
    _host = f"[{_host}]" if ":" in _host else _host
    if _host not in ALLOWED_HOSTS and "*" not in ALLOWED_HOSTS:
        ALLOWED_HOSTS.append(_host)
