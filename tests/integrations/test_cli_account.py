"""``docplatform-integration login``, ``logout`` and ``whoami`` against a live server: the
token is checked before it is saved, saved for the user only, and sent to its own API only."""

import http.server
import json
import os
import pty
import select
import signal
import stat
import threading
import time

import pytest

from docplatform.services import api_token_create
from tests.integrations.cli_support import CONSOLE_SCRIPT, Author, author_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api(live_server):
    return live_server.url + "/api/v1"


@pytest.fixture
def token(org_admin):
    return api_token_create(user=org_admin, name="laptop")[1]


@pytest.fixture
def author(tmp_path):
    return Author(tmp_path / "home")


@pytest.mark.slow
def test_login_checks_the_token_and_saves_it_for_the_user_only(author, api, token, org_admin):
    done = author.run("login", "--api", api + "/", "--token", token)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"logged in to {api} as {org_admin.username}",
        f"saved in {author.config_file}",
    ]
    assert json.loads(author.config_file.read_text()) == {"api": api, "token": token}
    assert stat.S_IMODE(author.config_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(author.config_file.parent.stat().st_mode) == 0o700

    whoami = author.run("whoami")
    assert whoami.returncode == 0, whoami.stderr
    assert whoami.stdout.splitlines() == [
        org_admin.username,
        "  acme (admin): " + org_admin.memberships.get().organization.title,
        f"api: {api}",
    ]
    as_json = json.loads(author.run("whoami", "--json").stdout)
    assert as_json["username"] == org_admin.username
    assert as_json["api"] == api
    assert [org["subdomain"] for org in as_json["organizations"]] == ["acme"]

    # Logging out removes the file; the commands then say how to log in.
    out = author.run("logout")
    assert (out.returncode, out.stdout) == (0, f"logged out: removed {author.config_file}\n")
    assert not author.config_file.exists()
    again = author.run("whoami")
    assert again.returncode == 2
    assert "not logged in: run docplatform-integration login" in again.stderr
    assert author.run("logout").stdout == "not logged in: nothing to remove\n"


@pytest.mark.slow
def test_a_wrong_token_is_refused_and_nothing_is_saved(author, api, token):
    for wrong in ("dpt_not-a-token", token[:-2] + "xx"):
        refused = author.run("login", "--api", api, "--token", wrong)
        assert refused.returncode == 1
        assert f"error: {api} refused the token (401): make a new one" in refused.stderr
        assert not author.config_file.exists()


@pytest.mark.slow
def test_login_refusals_say_why(author, api, token, live_server, tmp_path):
    unreachable = author.run("login", "--api", "http://127.0.0.1:9/api/v1", "--token", token)
    assert unreachable.returncode == 1
    assert "http://127.0.0.1:9/api/v1 cannot be reached (ConnectionError)" in unreachable.stderr

    not_the_api = author.run("login", "--api", live_server.url + "/marketplace", "--token", token)
    assert not_the_api.returncode == 1
    assert "is " + live_server.url + "/marketplace the API's URL" in not_the_api.stderr

    for arguments, message in [
        (["login", "--api", "ftp://x", "--token", token], "give the API's URL"),
        (["login", "--token", token], "give the API's URL with --api or DOCPLATFORM_API"),
        (["login", "--api", api], "no token given"),  # stdin is empty, not a terminal
    ]:
        done = author.run(*arguments)
        assert done.returncode == 2, arguments
        assert message in done.stderr, (arguments, done.stderr)
    assert not author.config_file.exists()


@pytest.mark.slow
def test_the_token_can_come_from_stdin_and_the_environment(author, api, token, org_admin):
    piped = author.run("login", "--api", api, stdin=token + "\n")
    assert piped.returncode == 0, piped.stderr
    assert json.loads(author.config_file.read_text())["token"] == token
    author.run("logout")
    from_env = author.run("login", DOCPLATFORM_API=api, DOCPLATFORM_TOKEN=token)
    assert from_env.returncode == 0, from_env.stderr


def on_a_new_terminal(author, *args: str, **env: str) -> tuple[int, int]:
    """The console script with ``args`` in a child process on a pseudo-terminal of its own:
    its pid and the terminal. Ctrl-C interrupts it whatever this process's SIGINT is (a
    background job ignores SIGINT, and a child inherits that)."""
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the console script on the terminal
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        command = [str(CONSOLE_SCRIPT), *args]
        os.execve(command[0], command, author_env(author.home, **env))  # noqa: S606 - no shell wanted
    return pid, terminal


def exit_code(pid: int, timeout: float = 30) -> int:
    """The child's exit code once it exits; killed, and the test failed, after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"the command did not exit within {timeout} s")


@pytest.mark.slow
def test_the_prompt_does_not_echo_the_token(author, api, token, org_admin):
    """On a terminal the token is asked for without echo (no browser needed)."""
    pid, terminal = on_a_new_terminal(author, "login", "--api", api)
    shown = read_until(terminal, b"Personal API token")
    os.write(terminal, token.encode() + b"\n")
    shown += read_until(terminal, b"saved in")
    assert exit_code(pid) == 0, shown
    assert token.encode() not in shown
    assert f"logged in to {api} as {org_admin.username}".encode() in shown
    assert json.loads(author.config_file.read_text())["token"] == token


def read_until(fd: int, marker: bytes, timeout: float = 30) -> bytes:
    data = b""
    while marker not in data:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, data
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data + drain(fd)


def drain(fd: int) -> bytes:
    data = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.slow
def test_a_saved_token_goes_to_its_own_api_only(author, api, token, live_server):
    assert author.run("login", "--api", api, "--token", token).returncode == 0
    elsewhere = author.run("whoami", "--api", "http://127.0.0.1:9/api/v1")
    assert elsewhere.returncode == 2
    assert f"the saved login is for {api}, not http://127.0.0.1:9/api/v1" in elsewhere.stderr
    # The options and the environment win over the saved login.
    assert author.run("whoami", "--token", "dpt_wrong").returncode == 1
    env_wins = author.run("whoami", DOCPLATFORM_TOKEN="dpt_wrong")
    assert env_wins.returncode == 1
    assert "whoami was refused (401)" in env_wins.stderr


@pytest.mark.slow
def test_a_broken_config_file_is_named(author, api, token):
    author.config_file.parent.mkdir(parents=True)
    author.config_file.write_text("{not json")
    broken = author.run("whoami")
    assert broken.returncode == 2
    assert f"{author.config_file} cannot be read (JSONDecodeError)" in broken.stderr
    # Logging in again replaces it.
    assert author.run("login", "--api", api, "--token", token).returncode == 0
    assert author.run("whoami").returncode == 0


def on_a_terminal(author, *args: str, **env: str) -> bytes:
    """What ``args`` print on a terminal (a pseudo-terminal of their own)."""
    pid, terminal = on_a_new_terminal(author, *args, **env)
    shown = drain_until_closed(terminal)
    assert exit_code(pid) == 0, shown
    return shown


def drain_until_closed(fd: int, timeout: float = 30) -> bytes:
    data = b""
    while select.select([fd], [], [], timeout)[0]:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.slow
def test_colours_only_on_a_terminal_and_never_with_no_color(author, api, token, org_admin):
    assert author.run("login", "--api", api, "--token", token).returncode == 0
    assert "\033[" not in author.run("whoami").stdout  # a pipe: no colours
    coloured = on_a_terminal(author, "whoami")
    assert f"\033[1m{org_admin.username}\033[0m".encode() in coloured
    plain = on_a_terminal(author, "whoami", NO_COLOR="1")
    assert b"\033[" not in plain
    assert org_admin.username.encode() in plain


def test_a_token_sent_in_clear_to_another_host_is_warned_about(author):
    done = author.run("whoami", "--api", "http://docplatform.invalid/api/v1", "--token", "dpt_x")
    assert done.returncode == 1
    assert (
        "warning: http://docplatform.invalid/api/v1 is plain http: the token travels in clear; "
        "use https"
    ) in done.stderr
    assert "http://docplatform.invalid/api/v1 cannot be reached (ConnectionError)" in done.stderr


class OtherService(http.server.BaseHTTPRequestHandler):
    """Some other JSON service, at the URL an author gave by mistake."""

    def do_GET(self):
        body = b'{"status": "up"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.slow
def test_another_service_at_the_url_is_not_taken_for_the_platform(author):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OtherService)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        other = f"http://127.0.0.1:{server.server_address[1]}/api/v1"
        done = author.run("login", "--api", other, "--token", "dpt_x")
    finally:
        server.shutdown()
    assert done.returncode == 1
    assert f"error: {other}/me/ is not a docplatform API: check --api" in done.stderr
    assert not author.config_file.exists()


@pytest.mark.slow
def test_ctrl_c_at_the_prompt_saves_nothing(author, api):
    pid, terminal = on_a_new_terminal(author, "login", "--api", api)
    read_until(terminal, b"Personal API token")
    os.write(terminal, b"\x03")  # Ctrl-C, as the terminal sends it
    shown = drain_until_closed(terminal)
    assert exit_code(pid) == 1, shown
    assert b"error: interrupted" in shown
    assert not author.config_file.exists()
