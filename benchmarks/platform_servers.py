"""The platform's servers as ``public_endpoint.py`` starts them: a web server (gunicorn, as
production runs it) and its runtime host, from this checkout or another (``--against``),
and the processes whose CPU a load round counts."""

import os
import sys
from contextlib import ExitStack
from pathlib import Path

import requests
from bench_processes import ROOT, postgres_pids, process_tree, start, wait_for

HERE = ROOT / "benchmarks"


def start_platform(
    stack: ExitStack,
    scratch: Path,
    env: dict,
    sandbox: str,
    workers: int | None,
    ports: tuple,
    transport: str,
    root: Path = ROOT,
    name: str | None = None,
) -> dict:
    """A web server (gunicorn) and its runtime host, whose workers run in ``sandbox``, spoken
    to in frames on a Unix socket (``transport`` ``unix``) or over HTTP (``http``); the code
    of the checkout at ``root`` (``--against``: another's, with its SDK)."""
    name = name or sandbox
    if root != ROOT:
        env = {**env, "PYTHONPATH": os.pathsep.join([str(root), str(root / "sdk"), str(HERE)])}
    web_port, runtime_port = ports
    web, runtime = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{runtime_port}"
    command = [sys.executable, "manage.py", "runtime_host", "--port", str(runtime_port)]
    if transport == "unix":
        socket_path = scratch / f"runtime-{name}.sock"
        runtime_url = f"unix://{socket_path}"
        command += ["--socket", str(socket_path)]
    else:
        runtime_url = runtime
        command += ["--gunicorn", "1"]
    env = {
        **env,
        "PLATFORM_URL": web,
        "INTEGRATIONS_URL": f"http://localhost:{web_port}",
        "RUNTIME_URL": runtime_url,
    }
    pools = {"RUNTIME_WORKERS_MAX": str(workers)} if workers else {}
    host = start(
        stack,
        command,
        env={**env, **pools, "RUNTIME_SANDBOX": sandbox},
        log=scratch / f"runtime-{name}.log",
        cwd=root,
    )
    server = start_web(stack, scratch, env, web_port, name, cwd=root)
    wait_for(f"{runtime}/health", host, scratch / f"runtime-{name}.log")
    health = requests.get(f"{runtime}/health", timeout=10).json()
    if health["sandbox"] != sandbox:
        raise RuntimeError(f"the runtime host runs {health['sandbox']!r}, not {sandbox!r}")
    from integrations.runtime.config import HostConfig

    config = HostConfig.from_environ({**env, **pools, "RUNTIME_SANDBOX": sandbox})
    host_line = (
        f"{runtime_url.split('://')[0]}, sandbox {health['sandbox']}, "
        f"seccomp {health.get('seccomp')}, "
        f"{config.pools.workers_max} workers per version at most, "
        f"{config.pools.spare_workers} spare"
    )
    return {"web": web, "integrations": f"http://localhost:{web_port}", "runtime": runtime,
            "env": env, "host": host_line, "cpu": _cpu_groups(server, host),
            "profiled": {"web": server.pid, "runtime-host": host.pid}}  # fmt: skip


def _cpu_groups(server, host) -> dict:
    """The processes whose CPU a load round counts: the web server's, the runtime host's, its
    workers' (with their sandboxes), PostgreSQL's, and this process's (the client)."""
    return {
        "web": lambda: process_tree(server.pid),
        "runtime host": lambda: [host.pid],
        "workers": lambda: process_tree(host.pid)[1:],
        "PostgreSQL": postgres_pids,
        "client": lambda: [os.getpid()],
    }


#: The web servers' gunicorn processes and threads each (``--web-workers``, ``--web-threads``):
#: ``deploy/Procfile.web``'s by default.
WEB = {"workers": 2, "threads": 8}


def start_web(stack: ExitStack, scratch: Path, env: dict, port: int, name: str, cwd=ROOT):
    """A web server of the platform (gunicorn, as production runs it) on ``port``; its
    process."""
    web = f"http://127.0.0.1:{port}"
    env = {**env, "PLATFORM_URL": web, "INTEGRATIONS_URL": f"http://localhost:{port}"}
    server = start(
        stack,
        [str(Path(sys.executable).parent / "gunicorn"), "docplatform.wsgi",
         "--bind", f"127.0.0.1:{port}",
         "--workers", str(WEB["workers"]), "--worker-class", "gthread",
         "--threads", str(WEB["threads"])],
        env=env,
        log=scratch / f"web-{name}.log",
        cwd=cwd,
    )  # fmt: skip
    wait_for(f"{web}/bench/bare/", server, scratch / f"web-{name}.log")
    return server
