"""``make run``'s last word: once the platform, the sites and the runtime host answer, the
addresses and the demo accounts, below the servers' start-up lines instead of above them.
Once the runtime host answers, it also publishes and installs the demo's quick insert block
integration if seed_demo could not (it ran before the runtime host started).

It then waits until ``make run`` stops (a process of the Procfile that ends stops them all).
"""

import signal
import time

import requests
from django.conf import settings
from django.core.management.base import BaseCommand

from integrations.gateway import hosts

from .seed_demo import DEMO_SUMMARY, demo_blocks_ensure

#: Each address and the answer that says it is up (any answer but a server error will do).
PATIENCE_SECONDS = 120


class Command(BaseCommand):
    help = "Print the platform's addresses once it answers (make run), then wait to be stopped."

    def add_arguments(self, parser):
        parser.add_argument("--patience", type=float, default=PATIENCE_SECONDS)

    def handle(self, *args, patience, **options):
        signal.signal(signal.SIGTERM, lambda *_: self._stop())
        signal.signal(signal.SIGINT, lambda *_: self._stop())
        addresses = {
            "the platform": settings.PLATFORM_URL + "/marketplace/",
            "the sites": settings.SITES_URL + "/",
        }
        silent = [name for name, url in addresses.items() if not _answers(url, patience)]
        if not _runtime_answers(patience):
            silent.append("the runtime host")
        lines = [f"Not answering after {patience:g} s: {', '.join(silent)}."] if silent else []
        summary = settings.VAR_DIR / DEMO_SUMMARY
        if summary.exists():
            lines += summary.read_text().splitlines()
        if "the runtime host" not in silent:
            # seed_demo ran before the runtime host: the demo's block integration now.
            installed, line = demo_blocks_ensure()
            lines += [line] if installed else []
        lines += [
            f"The marketplace: {settings.PLATFORM_URL}/marketplace/ · operators: "
            f"{settings.PLATFORM_URL}/admin/ · sites: {settings.SITES_URL}/ · runtime host: "
            f"{settings.RUNTIME_URL}",
            "Press Ctrl-C to stop everything.",
        ]
        rule = "=" * 78
        style = self.style.WARNING if silent else self.style.SUCCESS
        self.stdout.write(style("\n".join([rule, *lines, rule])))
        self.stdout.flush()
        while True:
            signal.pause()

    @staticmethod
    def _stop():
        raise SystemExit(0)


def _runtime_answers(patience: float) -> bool:
    """Whether every runtime host answers its health check (over HTTP or in frames)."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        answers = [hosts.health(host, 2) for host in hosts.host_urls(settings.RUNTIME_URL)]
        if all(answer is not None and answer[0] < 500 for answer in answers):
            return True
        time.sleep(0.25)
    return False


def _answers(url: str, patience: float) -> bool:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2, allow_redirects=False).status_code < 500:
                return True
        except requests.RequestException:  # not up yet
            pass
        time.sleep(0.25)
    return False
