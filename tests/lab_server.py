"""JupyterLab for the browser tests: started on a free port with a known token, stopped after."""

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request

TOKEN = "course-test"
START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def lab_server(options: list[str], env: dict):
    """JupyterLab run with `options` and `env`, once it answers: its base address."""
    port = free_port()
    command = [sys.executable, "-m", "jupyterlab", *options, "--allow-root", "--no-browser"]
    command += [f"--port={port}", f"--ServerApp.token={TOKEN}"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(server.stderr.read().decode()[-2000:]) from None
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=20)
