"""``docplatform-integration new`` offers to log in when no login is found: a question on a
terminal (Enter logs in, with the same prompts as ``login``), a printed next step otherwise,
never waiting on a run that is not interactive; nothing when a login is found."""

import json
import os
import pty
import time

import pytest

from docplatform.services import api_token_create
from tests.integrations.cli_support import CONSOLE_SCRIPT, Author, author_env
from tests.integrations.test_cli_account import read_until

LATER = (
    "not logged in: to try it on a platform, run docplatform-integration login --api "
    "https://HOST/api/v1 (a token from the marketplace's Developer settings)"
)
QUESTION = b"No login found: log in now, to publish it and try it on a platform? [Y/n]"


@pytest.fixture
def author(tmp_path):
    return Author(tmp_path / "home")


def on_a_terminal(author: Author, *args: str) -> tuple[int, int]:
    """The console script started on a pseudo-terminal: (pid, the terminal's fd)."""
    pid, terminal = pty.fork()
    if pid == 0:  # the child
        command = [str(CONSOLE_SCRIPT), *args]
        os.chdir(author.cwd)
        os.execve(command[0], command, author_env(author.home))  # noqa: S606 - no shell wanted
    return pid, terminal


def exit_code(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_without_a_terminal_it_prints_how_to_log_in_and_does_not_wait(author):
    started = time.monotonic()
    made = author.run("new", "hello")  # stdin: not a terminal, empty
    assert made.returncode == 0, made.stderr
    assert time.monotonic() - started < 30
    assert LATER in made.stdout.splitlines()
    assert "[Y/n]" not in made.stdout
    assert (author.cwd / "hello" / "main.py").exists()
    assert not author.config_file.exists()


@pytest.mark.django_db(transaction=True)
def test_on_a_terminal_enter_logs_in_and_saves_the_login(author, live_server, org_admin):
    token = api_token_create(user=org_admin, name="laptop")[1]
    api = live_server.url + "/api/v1"
    pid, terminal = on_a_terminal(author, "new", "hello", "--organization", "acme")
    shown = read_until(terminal, QUESTION)
    os.write(terminal, b"\n")  # Enter: yes
    shown += read_until(terminal, b"API URL")
    os.write(terminal, api.encode() + b"\n")
    shown += read_until(terminal, b"Personal API token")
    os.write(terminal, token.encode() + b"\n")
    shown += read_until(terminal, b"then: docplatform-integration dev hello")
    assert exit_code(pid) == 0, shown
    assert token.encode() not in shown  # the prompt does not echo it
    assert f"logged in to {api} as {org_admin.username}".encode() in shown
    assert json.loads(author.config_file.read_text()) == {"api": api, "token": token}

    # Logged in: the next new asks nothing.
    again = author.run("new", "second")
    assert again.returncode == 0, again.stderr
    assert "not logged in" not in again.stdout
    assert "next: pytest second" in again.stdout


def test_on_a_terminal_no_means_no_and_the_scaffold_stays(author):
    pid, terminal = on_a_terminal(author, "new", "hello")
    shown = read_until(terminal, QUESTION)
    os.write(terminal, b"n\n")
    shown += read_until(terminal, b"then: docplatform-integration dev hello")
    assert exit_code(pid) == 0, shown
    assert LATER.encode() in shown.replace(b"\r\n", b"\n")
    assert b"API URL" not in shown
    assert (author.cwd / "hello" / "test_main.py").exists()
    assert not author.config_file.exists()


@pytest.mark.django_db(transaction=True)
def test_a_refused_login_is_said_and_the_scaffold_stays(author, live_server):
    pid, terminal = on_a_terminal(author, "new", "hello")
    read_until(terminal, QUESTION)
    os.write(terminal, b"y\n")
    read_until(terminal, b"API URL")
    os.write(terminal, live_server.url.encode() + b"/api/v1\n")
    read_until(terminal, b"Personal API token")
    os.write(terminal, b"dpt_not-a-token\n")
    shown = read_until(terminal, b"then: docplatform-integration dev hello")
    assert exit_code(pid) == 0, shown
    assert b"refused the token (401)" in shown
    assert b"log in later with docplatform-integration login" in shown
    assert not author.config_file.exists()
    assert (author.cwd / "hello" / "main.py").exists()


def test_no_login_asks_nothing_even_on_a_terminal(author):
    pid, terminal = on_a_terminal(author, "new", "hello", "--no-login")
    shown = read_until(terminal, b"then: docplatform-integration dev hello")
    assert exit_code(pid) == 0, shown
    assert b"[Y/n]" not in shown and b"not logged in" not in shown
