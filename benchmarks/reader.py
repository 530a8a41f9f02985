"""The reader (``GET /s/<space id>/<page path>``), a member signed in and an anonymous visitor
of a public space, beside a bare Django view, in one run.

One platform under gunicorn (``docplatform.wsgi -w 2 -k gthread --threads 8``, PostgreSQL with
persistent connections, the benchmark's settings ``reader_settings``) and its runtime host
(``manage.py runtime_host --gunicorn 1``, 3 integration workers, bubblewrap). A space of 8
pages holds two measured ones: ``guide/plain``, 200 lines of Markdown (headings, paragraphs
with inline code, emphasis and links, lists, a table, code blocks), and ``guide/blocks``, the
same 200 lines with 3 blocks of ``examples/quick-insert-counter`` (published by its
organization's admin, installed on the space) between them, each a ``block`` fence
(``docplatform.markdown.block_fence``, a key of its own, ``props`` ``{}``). Everything is
created through the services (``integration_publish_folder``, ``installation_create``,
``space_content_update``); the reader is a member of the organization signed in through
``/marketplace/login/`` (its session cookie, its CSRF and visitor cookies on every request).

Under load, ``--concurrency`` HTTP/1.1 keep-alive connections (one thread each), in
alternating rounds (bare, bare-user, plain, blocks, bare, ...) after a warm-up, requests/s
and p50/p99:

bare        ``/bench/bare/`` (``reader_urls.py``, a benchmark-only URLconf): a plain Django
            view returning a 142-byte HTML page through the same middleware; it does not
            touch the session. The goals' reference.
bare-user   ``/bench/bare-user/``: the same once it has asked ``request.user.is_authenticated``
            (the session's and the user's reads, which every signed-in page pays); for
            information, the floor of any signed-in page.
plain       the 200-line page, no block.
blocks      the page with 3 blocks, warm: its blocks' markup is in the cache (the Markdown is
            rendered when the page is written). Django's default cache is local memory, per
            process: each of the 2 gunicorn workers warms its own (the warm-up does).
plain-anon, blocks-anon   the same pages of a third, public space, read without signing in
            (the visitor cookie only): the reader as anyone reads public documentation.

Each round also reports the CPU spent per request (``/proc``, so Linux only): the web server
and the runtime host with every process under them, the PostgreSQL backends connected to the
benchmark's database, and this process (the client); and how busy the whole machine was.

Serially (one request at a time, one keep-alive connection), ``--samples`` per round after the
load of that round, each sample being:

bare        one ``GET /bench/bare/``.
plain       one ``GET`` of the page without blocks.
cold        the first read of a freshly written page with 3 blocks: the benchmark writes a new
            revision of a second space (same 8 pages, the blocks with 3 new keys, so a new
            page row and 3 new component instances, as after an edit), untimed, then times
            one ``GET`` of it: the Markdown is parsed, the 3 blocks are rendered by the
            runtime (sent at once, to 3 integration workers; their states are stored), its
            Markdown was rendered when the revision was written (untimed).
warm        one ``GET`` of the warm page with blocks, for comparison.
runtime     one runtime call, timed in this process: ``integrations.services.components.
            component_render`` of one existing counter instance of the space's installation
            without an action (the component's state and the installation's environment read,
            the envelope signed and POSTed to the runtime host, the sandboxed worker's render,
            the answer checked and logged; nothing stored since the state does not change).
            This is what each block of a cold read costs, as the platform makes it.
api         the same render over HTTP, ``POST /api/v1/installations/<id>/components/counter/
            render/`` with a personal token: a web request plus one runtime call.

The goals (issue 18): plain >= 0.5 of bare's requests/s; blocks (warm) >= 0.3; cold p50 <
3 x bare p50 + runtime p50 (bare p50 taken serially, as the cold read is; the loaded bare
p50 is shown too). The ratios are given for the anonymous reader against bare, and for the
member against bare-user (what signing in costs every page) and against bare.

From a fresh clone:

    make install
    .venv/bin/python benchmarks/reader.py [--concurrency 8] [--seconds 5] [--rounds 3] \
        [--samples 20]

Needs PostgreSQL (``--postgres``, trust auth) on 127.0.0.1 and bubblewrap (``bwrap``); the
benchmark creates and drops a database of its own (``test_bench_reader``), stops every
process it started (also on an error, Ctrl-C or SIGTERM), and gives up after ``--timeout``
seconds (default: the rounds' length plus 5 minutes).
"""

import argparse
import base64
import http.client
import json
import os
import secrets
import shutil
import signal
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

import requests
from bench_processes import free_port, load, percentile, start, wait_for

DATABASE = "bench_reader"  # create_test_db() makes test_bench_reader
EXAMPLE = ROOT / "examples" / "quick-insert-counter"
PASSWORD = "bench-reader-" + secrets.token_urlsafe(12)
PLAIN_END = "End of the bench page."
COUNTER = b"Count: 0"  # each counter block shows it (label "Count", start 0)
BLOCK_FAILURE = b"could not be shown"


# --- The pages ------------------------------------------------------------------------------


def markdown_lines(count: int = 200) -> list[str]:
    """``count`` lines of ordinary documentation Markdown, the last one ``PLAIN_END``."""
    lines = ["# Working with the bench service", ""]
    section = 0
    while len(lines) < count - 1:
        section += 1
        lines += [
            f"## Section {section}: configuring part {section}",
            "",
            f"Part {section} reads its settings from `bench.toml` when it starts. The values "
            f"below are **defaults**; see [the reference](https://example.com/ref/{section}) "
            "for *every* option.",
            "",
            f"- `timeout`: how long part {section} waits, in seconds",
            "- `retries`: how many times it tries again",
            f"- `name`: what the logs call it (default `part-{section}`)",
            "",
            "```python",
            f"settings = load('bench.toml', part={section})",
            "print(settings.timeout)",
            "```",
            "",
            "| option | default | unit |",
            "| :--- | ---: | :---: |",
            f"| timeout | {section * 5} | s |",
            "| retries | 3 | times |",
            "",
            f"> Part {section} keeps ~~no~~ one log per day. Restart it after a change.",
            "",
        ]
    lines = lines[: count - 1]
    lines.append(PLAIN_END)
    return lines


def blocked_markdown(lines: list[str], keys: list[str]) -> str:
    """``lines`` with one counter block fence before each of the quarters 1, 2 and 3."""
    from docplatform.markdown import block_fence

    out = list(lines)
    step = len(lines) // (len(keys) + 1)
    for position, key in reversed(list(enumerate(keys, start=1))):
        fence = block_fence(integration="quick-insert-counter", block="counter", key=key, props={})
        out[position * step : position * step] = ["", *fence.rstrip("\n").split("\n"), ""]
    return "\n".join(out) + "\n"


def space_pages(block_keys: list[str]) -> list[dict]:
    """The 8 pages of a space: the two measured ones and six short ones around them."""
    lines = markdown_lines()
    short = "A short page.\n\n- one\n- two\n"
    return [
        {"path": "index", "title": "Home", "body": "# Home\n\nWelcome to the bench space.\n"},
        {"path": "guide", "title": "Guide", "body": short},
        {"path": "guide/install", "title": "Install", "body": short},
        {"path": "guide/plain", "title": "Plain page", "body": "\n".join(lines) + "\n"},
        {"path": "guide/blocks", "title": "Page with blocks",
         "body": blocked_markdown(lines, block_keys)},
        {"path": "guide/upgrade", "title": "Upgrade", "body": short},
        {"path": "reference", "title": "Reference", "body": short},
        {"path": "reference/api", "title": "API", "body": short},
    ]  # fmt: skip


def new_keys() -> list[str]:
    from docplatform.markdown import new_block_key

    return [new_block_key() for _ in range(3)]


# --- The data -------------------------------------------------------------------------------


def setup_platform() -> dict:
    """The organization of the example (``acme``), its admin who publishes the counter, a
    member who reads, two spaces with the counter installed on each, their pages."""
    from django.contrib.auth import get_user_model

    from docplatform.models import Membership, Space
    from docplatform.organizations.services import organization_create
    from docplatform.revisions import space_content_update
    from docplatform.services import api_token_create
    from integrations.services import integration_publish_folder
    from integrations.services.components import component_render
    from integrations.services.installations import installation_create

    users = get_user_model().objects
    admin = users.create_user("bench-admin", password=PASSWORD)
    reader = users.create_user("bench-reader", password=PASSWORD)
    organization = organization_create(subdomain="acme", title="Acme", admin=admin)
    Membership.objects.create(organization=organization, user=reader, role=Membership.Role.MEMBER)
    integration = integration_publish_folder(path=EXAMPLE, publisher=admin).version.integration
    spaces, installations = {}, {}
    for name in ("warm", "cold", "open"):
        visibility = Space.Visibility.PUBLIC if name == "open" else Space.Visibility.PRIVATE
        space = Space.objects.create(
            organization=organization, title=f"Bench {name}", visibility=visibility
        )
        installations[name] = installation_create(
            user=admin, integration=integration, organization=organization, space=space
        )
        space_content_update(space=space, pages=space_pages(new_keys()), author=admin)
        spaces[name] = space
    # The instance "one runtime call" renders again and again: made once here.
    component_render(
        installation=installations["warm"], component_id="counter", instance="bench-runtime-call"
    )
    _, token = api_token_create(user=reader, name="bench")
    return {"spaces": spaces, "installations": installations, "admin": admin, "token": token}


# --- Clients --------------------------------------------------------------------------------


def signed_in(web: str) -> requests.Session:
    """A session signed in as the member through the login form (CSRF token included)."""
    session = requests.Session()
    session.trust_env = False
    page = session.get(f"{web}/marketplace/login/", timeout=20)
    marker = 'name="csrfmiddlewaretoken" value="'
    token = page.text.split(marker, 1)[1].split('"', 1)[0]
    answer = session.post(
        f"{web}/marketplace/login/",
        data={"username": "bench-reader", "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{web}/marketplace/login/"},
        allow_redirects=False,
        timeout=20,
    )
    if answer.status_code != 302 or "sessionid" not in session.cookies:
        raise RuntimeError(f"the login failed: {answer.status_code} {answer.text[:300]!r}")
    return session


def cookie_header(session: requests.Session) -> str:
    return "; ".join(f"{cookie.name}={cookie.value}" for cookie in session.cookies)


def check_page(kind: str, status: int, body: bytes) -> str | None:
    """Why an answer is not the expected page, or None."""
    if status != 200:
        return f"{status} {body[:200]!r}"
    kind = kind.removesuffix("-anon")
    if kind in ("bare", "bare-user"):
        return None if b"Hello, bench!" in body else f"not the bare page: {body[:200]!r}"
    if PLAIN_END.encode() not in body:
        return f"not the whole page: {body[:200]!r}"
    if kind == "plain":
        return None if COUNTER not in body else "the plain page shows a counter"
    if body.count(COUNTER) != 3 or BLOCK_FAILURE in body:
        at = body.find(BLOCK_FAILURE)
        notice = body[at : at + 200].decode(errors="replace") if at >= 0 else None
        return f"{body.count(COUNTER)} counters shown, failure notice: {notice}"
    return None


def get(connection: http.client.HTTPConnection, path: str, cookie: str) -> tuple[int, bytes]:
    connection.request("GET", path, headers={"Cookie": cookie})
    answer = connection.getresponse()
    return answer.status, answer.read()


def serial_samples(web: str, data: dict, paths: dict, cookie: str, count: int) -> dict:
    """``count`` samples of each serial measurement, interleaved (see the docstring)."""
    from django.db import connection as db

    from docplatform.revisions import space_content_update
    from integrations.services.components import component_render

    parts = urlsplit(web)
    client = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    installation = data["installations"]["warm"]
    api_path = f"/api/v1/installations/{installation.pk}/components/counter/render/"
    api_body = json.dumps({"instance": "bench-api-call", "props": {}})
    api_headers = {"Authorization": f"Bearer {data['token']}", "Content-Type": "application/json"}
    cold_space = data["spaces"]["cold"]
    cold_path = f"/s/{cold_space.pk}/guide/blocks"
    found = {name: [] for name in ("bare", "plain", "cold", "warm", "runtime", "api")}

    def timed(kind: str, path: str, check: str) -> None:
        started = time.perf_counter()
        status, body = get(client, path, cookie)
        found[kind].append(time.perf_counter() - started)
        problem = check_page(check, status, body)
        if problem:
            raise RuntimeError(f"{kind} {path}: {problem}")

    for _ in range(count):
        timed("bare", paths["bare"], "bare")
        timed("plain", paths["plain"], "plain")
        space_content_update(space=cold_space, pages=space_pages(new_keys()), author=data["admin"])
        timed("cold", cold_path, "blocks")
        timed("warm", paths["blocks"], "blocks")
        started = time.perf_counter()
        component_render(
            installation=installation, component_id="counter", instance="bench-runtime-call"
        )
        found["runtime"].append(time.perf_counter() - started)
        started = time.perf_counter()
        client.request("POST", api_path, body=api_body, headers=api_headers)
        answer = client.getresponse()
        body = answer.read()
        found["api"].append(time.perf_counter() - started)
        if answer.status != 200 or COUNTER not in body:
            raise RuntimeError(f"the render API answered {answer.status} {body[:300]!r}")
    client.close()
    db.close()  # nothing held between rounds
    return found


# --- CPU ------------------------------------------------------------------------------------


def _processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds so far) of every process (``/proc``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks)
    return found


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the machine so far, all cores (``/proc/stat``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(values[:8])
    return (total - values[3] - values[4]) / ticks, total / ticks


class Meter:
    """The CPU the web server, the runtime host (each with every process under it),
    PostgreSQL (the backends connected to the benchmark's database) and this process (the
    client) spend between two snapshots."""

    def __init__(self, roots: dict[str, int], database: str):
        self.roots, self.database = roots, database

    def snapshot(self) -> dict:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [self.database],
            )
            backends = {row[0] for row in cursor.fetchall()}
        connection.close()
        processes = _processes()
        groups = {name: self._tree(root, processes) for name, root in self.roots.items()}
        groups["postgres"] = backends
        return {
            "cpu": {
                name: {pid: processes[pid][1] for pid in pids if pid in processes}
                for name, pids in groups.items()
            },
            "client": time.process_time(),
            "machine": _machine_busy(),
        }

    @staticmethod
    def _tree(root: int, processes: dict) -> set[int]:
        pids, pending = set(), [root]
        while pending:
            pid = pending.pop()
            pids.add(pid)
            pending += [child for child, (parent, _) in processes.items() if parent == pid]
        return pids

    @staticmethod
    def spent(before: dict, after: dict) -> dict:
        """CPU seconds per group; ``busy``, the machine's busy fraction meanwhile."""
        spent = {
            name: sum(cpu - before["cpu"][name].get(pid, 0.0) for pid, cpu in pids.items())
            for name, pids in after["cpu"].items()
        }
        spent["client"] = after["client"] - before["client"]
        busy = after["machine"][0] - before["machine"][0]
        spent["busy"] = busy / max(after["machine"][1] - before["machine"][1], 1e-9)
        return spent


# --- The run --------------------------------------------------------------------------------


class Stopped(Exception):
    """SIGTERM, or the run's time bound (SIGALRM)."""


def _stop(signum, frame):
    raise Stopped(signal.Signals(signum).name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--concurrency", type=int, default=8, help="client connections")
    parser.add_argument("--seconds", type=float, default=5, help="length of each round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per contender")
    parser.add_argument("--samples", type=int, default=20, help="serial samples per round")
    parser.add_argument("--timeout", type=float, help="give up after this many seconds")
    args = parser.parse_args()
    timeout = args.timeout or args.rounds * 4 * args.seconds + 300
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(int(timeout))

    scratch = Path(tempfile.mkdtemp(prefix="bench-reader-"))
    web_port, runtime_port = free_port(), free_port()
    web, runtime = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{runtime_port}"
    os.environ.update(
        DJANGO_SETTINGS_MODULE="reader_settings",
        DATABASE_URL=f"{args.postgres}/{DATABASE}",
        SECRET_KEY=secrets.token_urlsafe(32),
        ENCRYPTION_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        RUNTIME_SIGNING_KEY=secrets.token_urlsafe(32),
        VAR_DIR=str(scratch),  # the writes' events queue into a broker folder of its own
        CELERY_BROKER_URL="filesystem://",
        PLATFORM_URL=web,
        INTEGRATIONS_URL=f"http://localhost:{web_port}",
        RUNTIME_URL=runtime,
        RUNTIME_WORKERS_PER_VERSION="3",  # a page's 3 blocks render at once
        RUNTIME_SANDBOX="bwrap",
    )
    import django

    django.setup()
    from django.db import connection

    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    creation.create_test_db(verbosity=0, autoclobber=True)
    database_name = connection.settings_dict["NAME"]
    database_url = f"{args.postgres}/{database_name}?conn_max_age=60"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
        "DATABASE_URL": database_url,
    }
    started_at = time.strftime("%Y-%m-%d %H:%M:%S")
    load_before = os.getloadavg()
    try:
        with ExitStack() as stack:
            host = start(
                stack,
                [sys.executable, "manage.py", "runtime_host", "--gunicorn", "1"],
                env=env,
                log=scratch / "runtime.log",
            )
            wait_for(f"{runtime}/health", host, scratch / "runtime.log")
            data = setup_platform()  # publishing loads the code in the runtime host
            connection.close()
            server = start(
                stack,
                [str(Path(sys.executable).parent / "gunicorn"), "docplatform.wsgi",
                 "--bind", f"127.0.0.1:{web_port}",
                 "--workers", "2", "--worker-class", "gthread", "--threads", "8"],
                env=env,
                log=scratch / "web.log",
            )  # fmt: skip
            wait_for(f"{web}/bench/bare/", server, scratch / "web.log")
            session, anonymous = signed_in(web), requests.Session()
            anonymous.trust_env = False
            warm, public = data["spaces"]["warm"].pk, data["spaces"]["open"].pk
            paths = {
                "bare": "/bench/bare/",
                "bare-user": "/bench/bare-user/",
                "plain": f"/s/{warm}/guide/plain",
                "blocks": f"/s/{warm}/guide/blocks",
                "plain-anon": f"/s/{public}/guide/plain",
                "blocks-anon": f"/s/{public}/guide/blocks",
            }
            for kind, path in paths.items():  # the first read; the visitor cookie
                client = anonymous if kind.endswith("-anon") else session
                answer = client.get(web + path, timeout=30)
                problem = check_page(kind, answer.status_code, answer.content)
                if problem:
                    raise RuntimeError(f"{path}: {problem}")
            signed_cookie, anonymous_cookie = cookie_header(session), cookie_header(anonymous)
            cookies = {
                kind: anonymous_cookie
                if kind.endswith("-anon") or kind == "bare"
                else signed_cookie
                for kind in paths
            }
            cookie = signed_cookie
            results = {kind: ([], []) for kind in paths}

            def reading(kind: str, seconds: float):
                def check(status: int, body: bytes) -> str | None:
                    return check_page(kind, status, body)

                headers = {"Cookie": cookies[kind]}
                url = web + paths[kind]
                return load(url, check, args.concurrency, seconds, headers=headers)

            for kind in paths:  # warm-up: connections, both workers' caches
                reading(kind, 2)
            serial_samples(web, data, paths, cookie, 2)  # warm-up of the serial paths
            serial = {}
            meter = Meter({"web": server.pid, "runtime": host.pid}, database_name)
            cpu = {kind: {} for kind in paths}
            for _ in range(args.rounds):
                for kind in paths:
                    before = meter.snapshot()
                    latencies, rate = reading(kind, args.seconds)
                    spent = Meter.spent(before, meter.snapshot())
                    for name, value in spent.items():
                        cpu[kind][name] = cpu[kind].get(name, 0.0) + value
                    results[kind][0].extend(latencies)
                    results[kind][1].append(rate)
                for kind, values in serial_samples(web, data, paths, cookie, args.samples).items():
                    serial.setdefault(kind, []).extend(values)
        signal.alarm(0)
        report(args, results, cpu, serial, started_at, load_before, os.getloadavg())
    finally:
        signal.alarm(0)
        connection.close()
        creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(scratch, ignore_errors=True)


def report(
    args, results: dict, cpu: dict, serial: dict, started_at, load_before, load_after
) -> None:
    print(
        f"{started_at}; {os.cpu_count()} cores, load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after. PostgreSQL, gunicorn web -w 2 gthread x8, runtime host "
        f"gunicorn x1 (3 integration workers, bubblewrap); {args.concurrency} connections, "
        f"{args.rounds} rounds of {args.seconds:g} s; {args.rounds} x {args.samples} serial "
        "samples"
    )
    labels = {
        "bare": "bare Django view",
        "bare-user": "bare view + request.user",
        "plain": "reader, 200 lines, no block",
        "blocks": "reader, 3 blocks, warm",
        "plain-anon": "public space, anonymous, no block",
        "blocks-anon": "public space, anonymous, 3 blocks",
    }
    rows = {}
    for name, (latencies, rates) in results.items():
        rows[name] = (
            len(latencies),
            statistics.mean(rates),
            percentile(latencies, 0.50) * 1000,
            percentile(latencies, 0.99) * 1000,
        )
    print("\nUnder load:\n")
    print(
        f"| {'contender':<30} | requests | {'req/s':>7} | {'p50 ms':>7} | {'p99 ms':>7} "
        "| ratio to bare (req/s) |"
    )
    print(f"| {'-' * 30} | -------:| ------:| ------:| ------:| ------:|")
    for name, (count, rate, p50, p99) in rows.items():
        ratio = rate / rows["bare"][1]
        print(
            f"| {labels[name]:<30} | {count:>8} | {rate:>7.0f} | {p50:>7.2f} | {p99:>7.2f} "
            f"| {ratio:>7.2f} |"
        )
    print("\nCPU ms per request under load (the machine's busy share: all its processes):\n")
    print(
        f"| {'contender':<30} | {'web':>6} | {'postgres':>8} | {'runtime':>7} | {'client':>6} "
        "| busy |"
    )
    print(f"| {'-' * 30} | -----:| -------:| ------:| -----:| ---:|")
    for name, spent in cpu.items():
        count = rows[name][0]
        per = {key: spent[key] / count * 1000 for key in ("web", "postgres", "runtime", "client")}
        print(
            f"| {labels[name]:<30} | {per['web']:>6.2f} | {per['postgres']:>8.2f} "
            f"| {per['runtime']:>7.2f} | {per['client']:>6.2f} "
            f"| {spent['busy'] / args.rounds:>4.0%} |"
        )
    serial_labels = {
        "bare": "bare Django view",
        "plain": "reader, 200 lines, no block",
        "cold": "reader, 3 blocks, first read",
        "warm": "reader, 3 blocks, warm",
        "runtime": "one runtime call (component_render)",
        "api": "render API (HTTP + one runtime call)",
    }
    print("\nSerially (one request at a time):\n")
    print(f"| {'measurement':<38} | samples | {'p50 ms':>7} | {'p99 ms':>7} | {'mean ms':>7} |")
    print(f"| {'-' * 38} | -------:| ------:| ------:| ------:|")
    p50 = {}
    for name, values in serial.items():
        p50[name] = percentile(values, 0.5) * 1000
        print(
            f"| {serial_labels[name]:<38} | {len(values):>7} | {p50[name]:>7.2f} "
            f"| {percentile(values, 0.99) * 1000:>7.2f} | {statistics.mean(values) * 1000:>7.2f} |"
        )

    def ratio(name: str, reference: str = "bare") -> float:
        return rows[name][1] / rows[reference][1]

    print("\nGoals:\n")
    for suffix, reference, who in (
        ("-anon", "bare", "anonymous reader of a public space, against the bare view"),
        ("", "bare-user", "signed-in member, against the bare view that reads request.user"),
        ("", "bare", "signed-in member, against the bare view"),
    ):
        plain, blocks = ratio(f"plain{suffix}", reference), ratio(f"blocks{suffix}", reference)
        print(
            f"- {who}: plain {plain:.2f} (goal >= 0.5: {_met(plain >= 0.5)}), warm blocks "
            f"{blocks:.2f} (goal >= 0.3: {_met(blocks >= 0.3)})"
        )
    budget = 3 * p50["bare"] + p50["runtime"]
    loaded_budget = 3 * rows["bare"][2] + p50["runtime"]
    print(
        f"- first read p50 {p50['cold']:.2f} ms against 3 x bare p50 (serial) "
        f"{p50['bare']:.2f} + runtime call p50 {p50['runtime']:.2f} = {budget:.2f} ms: "
        f"{_met(p50['cold'] < budget)} (against the loaded bare p50 {rows['bare'][2]:.2f}: "
        f"{loaded_budget:.2f} ms, {_met(p50['cold'] < loaded_budget)}; with the render API's "
        f"p50 as the runtime call: {3 * p50['bare'] + p50['api']:.2f} ms, "
        f"{_met(p50['cold'] < 3 * p50['bare'] + p50['api'])})"
    )


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


if __name__ == "__main__":
    main()
