"""What a call printed and how it failed, returned by the host with each answer (headers
``X-Runtime-Output`` and ``X-Runtime-Error``, base64 of UTF-8) for the integration's log:
attributed to its call only, cut at 4 KB, never mixed into the protocol, and tracebacks in
the author's words (limits of the module's host: 2 s per call)."""

import base64
import json
import textwrap
import threading

import pytest
from docplatform_sdk.codebundle import CodeBundle

from integrations.runtime.call_failures import OutputCapture

from .support import environment_for

FETCH = {
    "type": "fetch",
    "eventId": "e",
    "request": {"method": "GET", "url": "http://p/x", "headers": {}},
}


def script(body: str, preamble: str = "") -> str:
    """A script whose fetch runs ``body`` and answers 200 ``{"ok": true}``."""
    return (
        textwrap.dedent(preamble)
        + "\n"
        + FETCH_TEMPLATE.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    "))
    )


FETCH_TEMPLATE = """
import os, subprocess, sys, time
from docplatform_sdk import Response, create_integration

def fetch(request, context):
{body}
    return Response.json({{"ok": True}})

integration = create_integration(fetch=fetch)
"""


def output_of(answer) -> str:
    return base64.b64decode(answer.headers.get("X-Runtime-Output", "")).decode()


def error_of(answer) -> str:
    return base64.b64decode(answer.headers.get("X-Runtime-Error", "")).decode()


def test_prints_of_every_kind_come_back_with_their_call(client):
    printing = script(
        """
        print("to stdout")
        print("to stderr", file=sys.stderr)
        os.write(1, b"raw fd 1\\n")
        os.write(2, b"raw fd 2\\n")
        subprocess.run(["/bin/sh", "-c", "echo from a subprocess"], check=True)
        os.write(1, b"\\xff\\xfe not UTF-8\\n")
        print("no newline at the end", end="")
        """
    )
    answer = client.call("printer", printing, FETCH)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"ok": True}
    assert output_of(answer) == (
        "to stdout\nto stderr\nraw fd 1\nraw fd 2\nfrom a subprocess\n"
        "\ufffd\ufffd not UTF-8\nno newline at the end"
    )
    assert "X-Runtime-Error" not in answer.headers
    # The next call has its own output only.
    again = client.call("printer", printing, FETCH)
    assert output_of(again).count("to stdout") == 1


def test_a_printed_protocol_message_is_output_not_protocol(client):
    forged = {"status": 299, "headers": [], "body": "", "outcome": "ok", "retire": True}
    hostile = script(
        f"""
        print({json.dumps(json.dumps(forged))})
        print(json.dumps({{"fetch": {{"url": "http://evil.example"}}}}))
        print('{{"loaded": true}}', file=sys.stderr)
        """,
        preamble="import json",
    )
    answer = client.call("forger", hostile, FETCH)
    assert (answer.status_code, answer.json()) == (200, {"ok": True})
    printed = output_of(answer).splitlines()
    assert json.loads(printed[0]) == forged
    assert printed[2] == '{"loaded": true}'


def test_output_over_4_kb_keeps_its_start_and_end_and_a_flood_never_blocks_the_call(client):
    flood = script(
        """
        sys.stdout.write("é" * 3000)
        sys.stdout.write("x" * 2_000_000)
        sys.stdout.write("é" * 5 + "the end")
        sys.stdout.flush()
        """
    )
    answer = client.call("flooder", flood, FETCH)
    assert (answer.status_code, answer.json()) == (200, {"ok": True})
    head, mark, tail = output_of(answer).split("\n")
    assert head == "é" * 1024 and tail.endswith("x" * 100 + "é" * 5 + "the end")
    printed = 3000 * 2 + 2_000_000 + 10 + 7
    assert (
        mark
        == f"[output cut: {printed - len(head.encode()) - len(tail.encode())} bytes in the middle]"
    )
    assert len(head.encode()) + len(tail.encode()) <= 4096


def test_the_traceback_names_the_authors_files(client):
    bundle = CodeBundle(
        script="main.py",
        files={
            "main.py": script("helpers.explode(request.route)", preamble="import helpers"),
            "helpers.py": "def explode(route):\n    raise ValueError(f'no route {route}')\n",
        },
    )
    answer = client.call("tracer", bundle, FETCH)
    assert answer.status_code == 500
    assert answer.json() == {"error": "integration_error", "message": "ValueError: no route /x"}
    stack = error_of(answer)
    assert stack.startswith("Traceback (most recent call last):\n")
    assert '  File "main.py", line 7, in fetch\n    helpers.explode(request.route)\n' in stack
    assert '  File "helpers.py", line 2, in explode\n' in stack
    assert stack.endswith("ValueError: no route /x\n")
    for hidden in ("/bundle", "docplatform_sdk", "worker.py", "<integration"):
        assert hidden not in stack


def test_a_load_error_names_file_and_line_with_what_loading_printed(client):
    broken = 'print("never run: the file does not compile")\nimport os\nx = (\n'
    answer = client.call("unloadable", broken, FETCH)
    assert answer.status_code == 500
    assert answer.json()["error"] == "integration_error"
    assert error_of(answer).startswith('  File "main.py", line 3\n')
    assert "SyntaxError" in error_of(answer)
    assert output_of(answer) == ""
    failing = 'print("importing")\nimport helpers_that_do_not_exist\n'
    answer = client.call("unimportable", failing, FETCH)
    assert output_of(answer) == "importing\n"
    assert 'File "main.py", line 2, in <module>' in error_of(answer)
    # The failure is remembered a while: the next call says the same, with the same stack.
    remembered = client.call("unimportable", failing, FETCH)
    assert (error_of(remembered), output_of(remembered)) == (error_of(answer), "importing\n")
    assert error_of(answer).endswith(
        "ModuleNotFoundError: No module named 'helpers_that_do_not_exist'\n"
    )


def test_code_that_fails_to_load_is_not_loaded_again_for_each_installation(client):
    # What the failed load printed (a token of that load) comes back to another
    # installation's call: the version's error remembered, no worker started to fail again.
    failing = 'import os\nprint(os.urandom(8).hex())\nraise RuntimeError("no config")\n'
    first = client.call("unloadable-everywhere", failing, FETCH)
    assert first.status_code == 500
    token = output_of(first)
    assert len(token.strip()) == 16
    other = environment_for("unloadable-everywhere", failing, client.host.url)
    other["installation"] = {**other["installation"], "id": "inst-2"}
    again = client.call("unloadable-everywhere", failing, FETCH, environment=other)
    assert (again.status_code, output_of(again)) == (500, token)
    assert error_of(again) == error_of(first)


def test_what_loading_printed_goes_with_the_first_call(client):
    chatty = 'print("module loaded")\n' + script('print("called")')
    assert output_of(client.call("chatty", chatty, FETCH)) == "module loaded\ncalled\n"


@pytest.mark.slow
def test_a_call_over_its_time_limit_keeps_what_it_printed(client):
    stuck = script('print("about to hang", flush=True)\nwhile True:\n    pass')
    answer = client.call("hanger", stuck, FETCH)
    assert answer.status_code == 504
    assert output_of(answer) == "about to hang\n"
    assert "time limit (2 s)" in error_of(answer)


def test_a_crash_keeps_what_it_printed(client):
    crasher = script('print("before the crash", flush=True)\nos._exit(3)')
    answer = client.call("crasher", crasher, FETCH)
    assert answer.status_code == 502
    assert output_of(answer) == "before the crash\n"
    assert "the worker crashed" in error_of(answer)


def test_two_integrations_printing_at_once_each_get_their_own_lines(client):
    def chatter(word: str) -> str:
        return script(
            f"""
            for number in range(50):
                print("{word}", number, flush=True)
                time.sleep(0.002)
            """
        )

    answers = {}

    def call(word):
        answers[word] = [client.call(f"chatter-{word}", chatter(word), FETCH) for _ in range(3)]

    threads = [threading.Thread(target=call, args=(word,)) for word in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for word in ("alpha", "beta"):
        for answer in answers[word]:
            assert output_of(answer) == "".join(f"{word} {n}\n" for n in range(50))


def test_a_character_cut_at_the_start_of_the_kept_end_is_dropped_whole():
    capture = OutputCapture(limit=8)
    capture.add(b"abcd")
    capture.add("é".encode() * 6)  # 12 bytes: the last 4 start at a character's boundary
    capture.add(b"z")  # now the last 4 bytes start in the middle of an "é"
    assert capture.text() == "abcd\n[output cut: 10 bytes in the middle]\néz"
