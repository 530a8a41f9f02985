"""Hostile integration code, run as an attacker would run it: an organization admin publishes
an integration and calls its public endpoint, through the real web server, the real runtime
host and its sandboxed workers. Every escape is refused or contained, the next normal call
is answered, and no platform secret shows in any answer or in the host's log.

The suite runs twice: with bubblewrap, and with the fallback made by the kernel's
``unshare``."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from urllib.parse import urlsplit

import pytest
import requests
from django.conf import settings

from integrations.environment import installation_public_endpoint, runtime_signing_key
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory
from tests.integrations.conftest import listing_approve, minimal_manifest

from .support import PROJECT_ROOT, RunningHost, free_port

SURVIVOR_SECONDS = "1234567"
INTRUDER = textwrap.dedent(
    """
    import json, os, socket, time
    from docplatform_sdk import Response, create_integration
    from helpers import attempt, read

    def proc(asked):
        environs = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                environs[entry] = attempt(lambda: read(f"/proc/{entry}/environ"))
        return {"pids": sorted(environs), "environs": environs}

    def files(asked):
        return {path: attempt(lambda: read(path)[:200]) for path in asked["paths"]}

    def connect(asked):
        def one(host, port):
            with socket.create_connection((host, port), timeout=2):
                return "connected"
        return {f"{h}:{p}": attempt(lambda: one(h, p)) for h, p in asked["targets"]}

    def network(asked):
        return {"interfaces": [name for _, name in socket.if_nameindex()],
                "resolve": attempt(lambda: socket.getaddrinfo("example.com", 80))}

    def imports(asked):
        def settings():
            from django.conf import settings
            return settings.DATABASES
        seen = {name: attempt(lambda: __import__(name) and "imported") for name in asked["names"]}
        return {**seen, "django settings": attempt(settings)}

    def fork(asked):
        children, error = 0, None
        for _ in range(100):
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                children += 1
            except OSError as exc:
                error = f"{type(exc).__name__}: {exc}"
                break
        return {"children": children, "error": error}

    def open_files(asked):
        handles, error = [], None
        try:
            for _ in range(10000):
                handles.append(open("/dev/null"))
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc.strerror}"
        return {"opened": len(handles), "error": error}

    def write(asked):
        results = {}
        for path in ("/tmp/big", "/bundle/planted.py", "/planted", "/usr/planted"):
            written = 0
            def fill():
                nonlocal written
                with open(path, "wb") as handle:
                    chunk = b"x" * (1 << 20)
                    for _ in range(1024):
                        handle.write(chunk)
                        written += len(chunk)
                return "wrote 1 GiB"
            results[path] = {"result": attempt(fill), "written": written}
        return results

    def survivor(asked):
        if os.fork() == 0:
            os.setsid()
            if asked.get("orphaned") and os.fork() != 0:
                os._exit(0)  # its parent gone: the sandbox's first process adopts it
            os.execv("/usr/bin/sleep", ["sleep", asked["seconds"]])
        if asked.get("orphaned"):
            os.wait()
        return {"started": True}

    def memory(asked):
        hoard = bytearray(4 << 30)
        return {"allocated": len(hoard)}

    def spin(asked):
        while True:
            pass

    def egress(asked, context):
        results = {}
        for url in asked["urls"]:
            answer = context.fetch(url)
            results[url] = {"status": answer.status, "body": answer.text()[:300]}
        return results

    def userns(asked):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
            return {"nested": "created"}
        return {"nested": f"refused: errno {ctypes.get_errno()}"}

    def whoami(asked):
        return {"uid": os.getuid(), "gid": os.getgid(), "hostname": socket.gethostname(),
                "pids": sorted(p for p in os.listdir("/proc") if p.isdigit())}

    ROUTES = {"/proc": proc, "/files": files, "/connect": connect, "/network": network,
              "/imports": imports, "/fork": fork, "/open-files": open_files, "/write": write,
              "/survivor": survivor, "/memory": memory, "/spin": spin, "/whoami": whoami,
              "/userns": userns}

    def fetch(request, context):
        asked = request.json() if request.body else {}
        if request.route == "/egress":
            return Response.json(egress(asked, context))
        if request.route in ROUTES:
            return Response.json(ROUTES[request.route](asked))
        return Response.json({"ok": True, "secrets": sorted(context.environment.secrets)})

    integration = create_integration(fetch=fetch)
    """
)
HELPERS = textwrap.dedent(
    """
    def attempt(action):
        try:
            return action()
        except BaseException as error:
            return f"refused: {type(error).__name__}"


    def read(path):
        with open(path, "rb") as handle:
            return handle.read().decode("latin-1")
    """
)


@pytest.fixture(scope="module", params=["bwrap", "unshare"])
def sandboxed_host(request, tmp_path_factory):
    if request.param == "bwrap" and shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed (apt-get install bubblewrap; .ci/run does)")
    host = RunningHost(
        runtime_signing_key(),
        tmp_path_factory.mktemp(f"sandbox-{request.param}") / "host.log",
        RUNTIME_SANDBOX=request.param,
        RUNTIME_CALL_TIMEOUT="4",
        RUNTIME_WORKERS_PER_VERSION="1",
        RUNTIME_WORKER_MEMORY_MB="512",
        RUNTIME_WORKER_TMP_MB="64",
        # What the host's own environment holds must never reach integration code.
        DATABASE_URL="postgres://platform:database-password@db.internal/platform",
        SECRET_KEY=settings.SECRET_KEY,
    )
    yield host
    host.stop()


@pytest.fixture
def intruder(sandboxed_host, origins, transactional_db, tmp_path):
    """The hostile integration, published and installed by another tenant's admin; and
    the secrets of the platform and of a victim tenant it must never see."""
    settings.RUNTIME_URL = sandboxed_host.frames_url
    attacker = MembershipFactory(
        organization=OrganizationFactory(subdomain="attackers"), role="admin"
    )
    folder = tmp_path / "intruder"
    (folder / "pkg").mkdir(parents=True)
    (folder / "main.py").write_text(INTRUDER)
    (folder / "helpers.py").write_text(HELPERS)
    manifest = minimal_manifest(  # it declares every host: the outbound guard still holds
        name="intruder", organization="attackers", script="main.py", network={"fetch": ["*"]}
    )
    import yaml

    (folder / "service-manifest.yaml").write_text(yaml.safe_dump(manifest))
    integration = integration_publish_folder(
        path=folder, publisher=attacker.user
    ).version.integration
    installation = installation_create(
        user=attacker.user, integration=integration, organization=attacker.organization
    )
    listing_approve(integration)  # a public listing other organizations may install
    victim = MembershipFactory(organization=OrganizationFactory(subdomain="victims"), role="admin")
    victim_installation = installation_create(
        user=victim.user, integration=integration, organization=victim.organization
    )
    secrets = {
        "SECRET_KEY": settings.SECRET_KEY,
        "ENCRYPTION_KEYS": settings.ENCRYPTION_KEYS[0],
        "RUNTIME_SIGNING_KEY": runtime_signing_key(),
        "database password": "database-password",
        "victim installation token": victim_installation.api_token,
    }
    return Intruder(sandboxed_host, installation_public_endpoint(installation), secrets)


class Intruder:
    def __init__(self, host, endpoint, secrets):
        self.host, self.endpoint, self.secrets = host, endpoint, secrets
        self.answers = []

    def call(self, route: str, timeout=30, **asked) -> requests.Response:
        answer = requests.post(self.endpoint + route, json=asked, timeout=timeout)
        self.answers.append(answer.text)
        return answer

    def still_serves(self):
        answer = self.call("/")
        assert answer.status_code == 200, answer.text
        assert answer.json()["ok"] is True

    def leaked(self) -> list[str]:
        seen = "\n".join([*self.answers, self.host.log()])
        return [name for name, value in self.secrets.items() if value and value in seen]


@pytest.fixture
def attack(intruder):
    yield intruder
    intruder.still_serves()
    assert intruder.leaked() == []


@pytest.mark.slow
def test_the_worker_is_nobody_alone_in_its_namespaces(attack):
    seen = attack.call("/whoami").json()
    assert (seen["uid"], seen["gid"], seen["hostname"]) == (65534, 65534, "sandbox")
    assert len(seen["pids"]) <= 2  # its sandbox's first process and itself


@pytest.mark.slow
def test_no_process_environment_of_the_platform_can_be_read(attack):
    seen = attack.call("/proc").json()
    assert len(seen["pids"]) <= 2
    for content in seen["environs"].values():
        assert "DATABASE_URL" not in content and "RUNTIME_SIGNING_KEY" not in content


def test_the_platforms_files_and_database_are_not_there(attack):
    database = settings.DATABASES["default"]
    paths = [
        str(PROJECT_ROOT / "docplatform" / "settings" / "__init__.py"),
        str(PROJECT_ROOT / "var" / "db.sqlite3"),
        str(PROJECT_ROOT / "manage.py"),
        str(database["TEST"].get("NAME") or database["NAME"]),
        "/etc/shadow",
        "/etc/passwd",
        "/root/.bash_history",
        "/proc/1/environ",
    ]
    seen = attack.call("/files", paths=paths).json()
    for path in paths[:-1]:
        assert seen[path].startswith("refused: "), (path, seen[path])
    assert "RUNTIME" not in seen["/proc/1/environ"]


def test_no_network_reaches_the_databases_the_web_server_or_the_runtime_host(attack):
    targets = [
        ["127.0.0.1", 5432],
        ["127.0.0.1", 6379],
        ["127.0.0.1", 5672],
        ["127.0.0.1", int(urlsplit(settings.PLATFORM_URL).port)],
        ["127.0.0.1", int(urlsplit(attack.host.url).port)],
        ["::1", 6379],
    ]
    seen = attack.call("/connect", targets=targets).json()
    assert all(result.startswith("refused: ") for result in seen.values()), seen
    network = attack.call("/network").json()
    assert network["interfaces"] == ["lo"]  # and it is down: every connect above failed
    assert network["resolve"].startswith("refused: ")


def test_bubblewrap_refuses_a_nested_user_namespace(attack, sandboxed_host):
    if "sandboxed (bwrap)" not in sandboxed_host.log():
        pytest.skip("the unshare fallback leaves nested user namespaces to the kernel's limits")
    assert attack.call("/userns").json()["nested"].startswith("refused: ")


def test_the_platform_cannot_be_imported(attack):
    names = ["docplatform", "integrations.models", "webhooks", "marketplace", "django"]
    seen = attack.call("/imports", names=names).json()
    assert all(seen[name].startswith("refused: ") for name in names), seen
    assert seen["django settings"].startswith("refused: ")


def test_fetch_cannot_reach_the_platform_beside_its_api_nor_the_runtime_host(attack):
    urls = [
        settings.PLATFORM_URL + "/admin/",
        attack.host.url + "/health",
        "http://127.0.0.1:5432/",
        "http://169.254.169.254/latest/meta-data/",
    ]
    seen = attack.call("/egress", urls=urls).json()
    for url in urls:
        assert seen[url]["status"] == 403, (url, seen[url])
        assert "egress_refused" in seen[url]["body"]


def test_a_fork_bomb_is_capped_and_its_children_die_with_the_worker(attack):
    seen = attack.call("/fork").json()
    assert seen["children"] < 100
    assert seen["error"].startswith("BlockingIOError")  # EAGAIN: the process limit
    wait_until(lambda: len(attack.call("/whoami").json()["pids"]) <= 2, timeout=10)


def test_thousands_of_open_files_are_capped(attack):
    seen = attack.call("/open-files").json()
    assert seen["opened"] < 10000
    assert seen["error"] == "OSError: Too many open files"


def test_a_huge_file_is_capped_and_nothing_is_written_outside_tmp(attack):
    seen = attack.call("/write", timeout=60).json()
    assert seen["/tmp/big"]["written"] <= 64 << 20
    assert seen["/tmp/big"]["result"].startswith("refused: ")
    for path in ("/bundle/planted.py", "/planted", "/usr/planted"):
        assert seen[path] == {"result": "refused: OSError", "written": 0}, path
    assert not os.path.exists("/usr/planted") and not os.path.exists("/planted")


@pytest.mark.parametrize("orphaned", [False, True])
def test_a_setsid_survivor_dies_with_its_worker(attack, orphaned):
    """Its child's or, orphaned (a daemon's double fork), the sandbox namespace's first
    process's: the host's accounts after the call find it either way."""
    asked = {"seconds": SURVIVOR_SECONDS, "orphaned": orphaned}
    assert attack.call("/survivor", **asked).json() == {"started": True}
    # The call left a process behind: the worker is retired, and its sandbox with it.
    wait_until(lambda: not survivors(), timeout=10)


def test_a_memory_blow_up_is_contained(attack):
    answer = attack.call("/memory")
    assert answer.status_code == 502
    assert answer.json()["error"] == "integration_error"


def test_a_cpu_loop_is_cut_at_the_call_limit(attack):
    started = time.monotonic()
    answer = attack.call("/spin")
    assert answer.status_code == 504
    assert answer.json()["error"] == "timeout"
    assert time.monotonic() - started < 15


def survivors() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    arguments = handle.read().split(b"\0")
            except OSError:
                continue
            if arguments[:2] == [b"sleep", SURVIVOR_SECONDS.encode()]:
                found.append(int(entry))
    return found


@pytest.mark.slow
def test_the_host_refuses_to_start_without_a_sandbox_unless_told(tmp_path):
    with pytest.raises(RuntimeError, match="exited"):
        RunningHost("k", tmp_path / "refused.log", RUNTIME_SANDBOX="bwrap", PATH="/nonexistent")
    log = (tmp_path / "refused.log").read_text()
    assert "no sandbox for integration code can be made here" in log
    assert "RUNTIME_SANDBOX=off" in log

    unconfined = RunningHost("k", tmp_path / "off.log", RUNTIME_SANDBOX="off")
    try:
        health = requests.get(unconfined.url + "/health", timeout=5).json()
        assert health["sandbox"] == "off"
        assert "UNCONFINED" in health["warning"]
        assert "UNCONFINED" in unconfined.log()
    finally:
        unconfined.stop()


@pytest.mark.slow
def test_the_production_host_stops_rather_than_retrying_without_a_sandbox(tmp_path):
    """``manage.py runtime_host --gunicorn``, as production starts it: gunicorn gives up on
    a worker that cannot boot instead of booting it again forever, so the host's exit, not
    its silence, tells the operator."""
    command = [sys.executable, "manage.py", "runtime_host", "--gunicorn", "1"]
    command += ["--port", str(free_port())]
    finished = subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        env={**os.environ, "DEBUG": "true", "RUNTIME_SANDBOX": "bwrap", "PATH": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode != 0
    output = finished.stdout + finished.stderr
    assert "no sandbox for integration code can be made here" in output
    assert output.count("Booting worker") == 1


def test_health_says_which_sandbox_runs(sandboxed_host):
    health = requests.get(sandboxed_host.url + "/health", timeout=5).json()
    assert health["sandbox"] in ("bwrap", "unshare")
    assert "warning" not in health
    assert json.dumps(health).count("UNCONFINED") == 0
