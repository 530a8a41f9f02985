"""The cold start of an integration version: its first call, as the platform makes it.

A real runtime host as in production (``manage.py runtime_host --gunicorn 1``: gunicorn,
gthread, bubblewrap's sandbox, the default pool settings but a short idle time) is sent
the first call of ``--bundles`` freshly published bundles (a ``fetch`` of a small script
importing the SDK), one after another with ``--pause`` seconds between them (time for the
host to start its spare workers again). Each call is timed as the platform's gateway
(``integrations/gateway/client.py``) makes it: from the envelope sent without the bundle,
through the host's 409 ``bundle_required`` and the envelope sent again with the bundle, to
the answer read. Then the same again for the first call of each version after its pool
shrank to no worker (``RUNTIME_WORKER_IDLE_SECONDS``; the host still holds the bundle: no 409).
Printed: each time and the median. From a fresh clone:

    make install
    .venv/bin/python benchmarks/cold_start.py [--bundles 10] [--pause 1.5] [--sandbox bwrap]

Needs bubblewrap (``apt-get install bubblewrap``; ``--sandbox unshare`` or ``off`` to compare)
and nothing else of the platform (no database); it stops the host it started. The machine
may be shared: figures move from run to run.
"""

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import requests
from urllib3.filepost import encode_multipart_formdata

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk"), str(HERE)]

from bench_processes import free_port, start, wait_for
from docplatform_sdk import signing
from docplatform_sdk.codebundle import CodeBundle, digest

KEY = secrets.token_hex(16)
SCRIPT = """\
from docplatform_sdk import Response, create_integration

VERSION = {version!r}


def fetch(request, context):
    return Response.json({{"version": VERSION}})


integration = create_integration(fetch=fetch)
"""
EVENT = {
    "type": "fetch",
    "eventId": "e",
    "request": {"method": "GET", "url": "http://p/", "headers": {}},
}


def environment(name: str, bundle: bytes) -> dict:
    return {
        "apiEndpoint": "http://platform.invalid/api/v1",
        "apiTokens": {"integration": "integration-token"},
        "integration": {
            "name": name,
            "version": 1,
            "bundleHash": digest(bundle),
            "urls": {"publicEndpoint": f"http://platform.invalid/integrations/{name}"},
        },
        "secrets": {},
    }


def post(session, url: str, env: dict, bundle: bytes | None, event=EVENT) -> requests.Response:
    """One envelope, encoded and signed as the gateway does."""
    fields = [
        ("event", ("event.json", json.dumps(event).encode(), "application/json")),
        ("environment", ("environment.json", json.dumps(env).encode(), "application/json")),
    ]
    if bundle is not None:
        fields.append(("bundle", ("bundle.json", bundle, "application/json")))
    body, content_type = encode_multipart_formdata(fields)
    headers = {"Content-Type": content_type, signing.HEADER: signing.sign(body, KEY)}
    return session.post(url, data=body, headers=headers, timeout=30)


def send(session, host: str, name: str, bundle: bytes, event=EVENT) -> requests.Response:
    """An envelope as the platform sends it: without the bundle, and again with it on 409."""
    url, env = f"{host}/integrations/{name}/v1", environment(name, bundle)
    answer = post(session, url, env, None, event)
    if answer.status_code == 409:
        answer = post(session, url, env, bundle, event)
    return answer


def first_call(session, host: str, name: str, bundle: bytes) -> float:
    """The ms from the first envelope sent to the answer read, the 409 round trip included."""
    started = time.perf_counter()
    answer = send(session, host, name, bundle)
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != 200:
        raise RuntimeError(f"{name}: {answer.status_code} {answer.text}")
    return elapsed


def report(title: str, times: list[float]):
    print(f"{title}: median {statistics.median(times):.1f} ms")
    print("  " + " ".join(f"{value:.1f}" for value in times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundles", type=int, default=10)
    parser.add_argument("--pause", type=float, default=1.5)
    parser.add_argument("--sandbox", default="bwrap")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-cold-start-"))
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    idle = 2.0
    env = {
        **os.environ,
        "DEBUG": "true",  # the development settings: no database is needed
        "RUNTIME_SIGNING_KEY": KEY,
        "RUNTIME_SANDBOX": args.sandbox,
        "RUNTIME_WORKER_IDLE_SECONDS": str(idle),
    }
    with ExitStack() as stack:
        command = [sys.executable, "manage.py", "runtime_host", "--gunicorn", "1"]
        command += ["--port", str(port)]
        process = start(stack, command, env=env, log=scratch / "host.log")
        wait_for(f"{host}/health", process, scratch / "host.log")
        print(f"sandbox: {requests.get(f'{host}/health', timeout=5).json()['sandbox']}")
        session = requests.Session()
        session.trust_env = False
        bundles = {}
        published = []
        time.sleep(args.pause)
        for number in range(args.bundles):
            name = f"cold-{number}"
            files = {"main.py": SCRIPT.format(version=secrets.token_hex(8))}
            bundles[name] = CodeBundle(script="main.py", files=files).encode()
            published.append(first_call(session, host, name, bundles[name]))
            time.sleep(args.pause)
        report("first call after a publish (409 and resend included)", published)
        time.sleep(idle * 2)  # every pool shrinks to no worker
        shrunk = []
        for name, bundle in bundles.items():
            shrunk.append(first_call(session, host, name, bundle))
            time.sleep(args.pause)
        report("first call after the pool shrank to none", shrunk)


if __name__ == "__main__":
    main()
