"""One installation's state never reaches another's: a worker serves the calls of one
installation of an integration (the organization's installation the signed environment
names), so a module global or a file in ``/tmp`` written during one organization's call is
not there during another organization's; and a worker whose open files, address space or
``/tmp`` its code all but used up is replaced before its next call."""

import pytest

from .support import environment_for

SCRIPT = """
import os
from docplatform_sdk import Response, create_integration

WORKER = os.urandom(8).hex()
SEEN = []  # the organizations whose calls this worker served
HELD = []  # what a call kept: open files, memory


def fetch(request, context):
    organization = request.query["organization"]
    found = {"worker": WORKER, "seen": list(SEEN), "tmp": sorted(os.listdir("/tmp"))}
    SEEN.append(organization)
    with open(f"/tmp/written-for-{organization}", "w") as written:  # the call can open a file
        written.write(organization)
    exhaust = request.query.get("exhaust")
    if exhaust == "files":
        try:
            while True:
                HELD.append(open("/dev/null"))
        except OSError as error:
            found["exhausted"] = error.strerror
    elif exhaust == "tmp":
        try:
            with open("/tmp/filler", "wb") as filler:
                while True:
                    filler.write(bytes(1024 * 1024))
                    filler.flush()
        except OSError as error:
            found["exhausted"] = error.strerror
    elif exhaust == "memory":  # held, the MemoryError caught: the worker does not ask to go
        try:
            while True:
                HELD.append(bytearray(8 * 1024 * 1024))
        except MemoryError:
            found["exhausted"] = "MemoryError"
    return Response.json(found)


integration = create_integration(fetch=fetch)
"""


def call(client, name: str, organization: str, exhaust: str = "") -> dict:
    """One call of ``name`` by the installation of ``organization``; its answer's body."""
    environment = environment_for(name, SCRIPT, client.host.url)
    environment["installation"] = {**environment["installation"], "id": f"inst-{organization}"}
    query = f"organization={organization}" + (f"&exhaust={exhaust}" if exhaust else "")
    event = {
        "type": "fetch",
        "eventId": "e",
        "request": {"method": "GET", "url": f"http://p/x?{query}", "headers": {}},
    }
    answer = client.call(name, SCRIPT, event, environment)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_global_and_a_tmp_file_of_one_organization_are_not_anothers(client):
    acme = call(client, "tenants", "acme")
    assert (acme["seen"], acme["tmp"]) == ([], [])
    globex = call(client, "tenants", "globex")
    assert (globex["seen"], globex["tmp"]) == ([], [])
    assert globex["worker"] != acme["worker"]
    # Each organization's worker stays warm for its own calls, with its own state.
    again = call(client, "tenants", "acme")
    assert again["worker"] == acme["worker"]
    assert (again["seen"], again["tmp"]) == (["acme"], ["written-for-acme"])
    globex_again = call(client, "tenants", "globex")
    assert (globex_again["seen"], globex_again["tmp"]) == (["globex"], ["written-for-globex"])


@pytest.mark.parametrize(
    ("exhaust", "reason"),
    [
        ("files", "it holds 256 open files of its 256"),
        ("tmp", "its /tmp holds 64 MiB of its 64"),
        ("memory", "its address space is"),
    ],
)
def test_a_worker_that_used_up_a_limit_is_replaced_before_the_next_call(client, exhaust, reason):
    name = f"exhausts-{exhaust}"
    first = call(client, name, "acme")
    exhausted = call(client, name, "acme", exhaust=exhaust)
    assert exhausted["worker"] == first["worker"]
    assert exhausted["exhausted"]
    following = call(client, name, "acme")  # it could open and write a file
    assert following["worker"] != first["worker"]
    assert (following["seen"], following["tmp"]) == ([], [])
    assert f"replaced: {reason}" in client.host.log()
