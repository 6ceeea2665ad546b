"""Fixtures for transfer tests: a real S3 server (moto's standalone server, started
here as a process on 127.0.0.1 with an ephemeral port) and a real HTTP server on
loopback serving a temporary directory."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import uuid

import pytest

from transfer.urls import S3Settings

_LISTENING = re.compile(r"Running on (http://127\.0\.0\.1:\d+)")
_START_TIMEOUT = 60.0


def _start_moto(extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``python -m moto.server`` on an ephemeral loopback port and return the
    process and its endpoint URL once it says it is listening."""
    env = dict(os.environ, **(extra_env or {}))
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:  # keep reading so request logs never fill the pipe
        for line in process.stderr:
            match = _LISTENING.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    if not ready.wait(_START_TIMEOUT) or not found:
        process.kill()
        raise RuntimeError("moto server did not start; is moto[server] installed (the test extra)?")
    return process, found[0]


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def s3_endpoint():
    """The endpoint URL of a moto S3 server shared by the whole test session."""
    process, endpoint = _start_moto()
    yield endpoint
    _stop(process)


@pytest.fixture(scope="session")
def s3_settings(s3_endpoint) -> S3Settings:
    """Credentials and endpoint for the moto server (moto accepts any keys)."""
    return S3Settings("AKIDTESTROOST", "secret-for-tests", region="us-east-1", endpoint_url=s3_endpoint)


@pytest.fixture(scope="session")
def s3_client(s3_settings):
    """A plain boto3 client on the moto server, for arranging and checking buckets."""
    import boto3

    return boto3.client("s3", aws_access_key_id=s3_settings.access_key_id,
                        aws_secret_access_key=s3_settings.secret_access_key,
                        region_name="us-east-1", endpoint_url=s3_settings.endpoint_url)


@pytest.fixture
def bucket(s3_client) -> str:
    """A new empty bucket on the moto server."""
    name = f"roost-{uuid.uuid4().hex[:12]}"
    s3_client.create_bucket(Bucket=name)
    return name


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:  # keep test output clean
        pass


@pytest.fixture
def http_root(tmp_path):
    """A directory served over HTTP on loopback; yields (directory, base URL)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()
