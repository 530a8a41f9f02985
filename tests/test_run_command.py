"""``make run``'s supervisor (``tools/run.py``, honcho underneath) on a Procfile of its own, as
a person stops it with Ctrl-C: a process that takes longer than honcho's 5 s to stop (as a
Celery worker's warm shutdown does) is waited for, never SIGKILLed; its children are its own
to stop (none killed under it); a process stopped when asked reads "stopped", not a return
code."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "run.py"

# Stops 6 s after SIGTERM, after stopping the child it started (which says so).
SLOW = """
import signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
def stop(*_):
    time.sleep(6)
    child.terminate()
    child.wait()
    print("child stopped by its parent, code", child.returncode, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
while True:
    time.sleep(0.1)
"""


@pytest.mark.slow
def test_ctrl_c_lets_each_process_stop_in_its_own_time(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "Procfile").write_text(
        f"# a comment line\nslow: exec {sys.executable} slow.py\nquick: exec sleep 600\n"
    )
    run = subprocess.Popen(
        [sys.executable, str(TOOL), "--no-colour", "-d", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        seen = ""
        while "ready" not in seen and time.monotonic() < deadline:
            seen += run.stdout.readline()
        assert "ready" in seen, seen
        run.send_signal(signal.SIGINT)  # the terminal's Ctrl-C reaches the supervisor
        output = seen + run.communicate(timeout=40)[0]
    finally:
        if run.poll() is None:
            run.kill()
    assert "SIGKILL" not in output, output
    assert "child stopped by its parent, code -15" in output, output
    assert "slow.1 stopped\n" in output and "quick.1 stopped\n" in output, output
    assert "rc=" not in output, output
