"""Real local servers for tests/test_endpoint.py, each serving the packaged SmolLM2 GGUF on the
loopback interface in a process of its own: llama.cpp's own C++ server (the prebuilt `xllamacpp`
wheel, of the `test` extra: chat and completions with `top_logprobs`, no echo) and, when
$ROBUSTCOUNT_LLAMA_PYTHON names an interpreter that has it, llama-cpp-python's server (`make
llama-server` builds it: echoed log-probabilities); and a fault-injecting HTTP proxy in front of
either that counts what reaches the server.

Run as a script (`python -m tests.endpoint_servers GGUF PORT`), this module is the xllamacpp
server's process: it serves until it is killed."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LLAMA_PYTHON_VARIABLE = "ROBUSTCOUNT_LLAMA_PYTHON"
"""An interpreter with llama-cpp-python[server] installed, when this one has none (the opt-in tier)."""
REQUIRE_VARIABLE = "ROBUSTCOUNT_REQUIRE_LLAMA_SERVER"
"""Set to 1 (`make test` does), a missing xllamacpp fails the tests instead of skipping them."""


def llama_python() -> str | None:
    """An interpreter that can run `llama_cpp.server`: this one, or $ROBUSTCOUNT_LLAMA_PYTHON."""
    for python in (sys.executable, os.environ.get(LLAMA_PYTHON_VARIABLE)):
        if python and subprocess.run([python, "-c", "import llama_cpp.server.app"], capture_output=True).returncode == 0:
            return python
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def has_xllamacpp() -> bool:
    return subprocess.run([sys.executable, "-c", "import xllamacpp"], capture_output=True).returncode == 0


def start_xllamacpp_server(gguf: str, log_path, cache_prompt: bool = False) -> tuple[subprocess.Popen, int]:
    """llama.cpp's own server (xllamacpp) on 127.0.0.1, in a process of its own, once it answers
    (`cache_prompt`: see `serve_xllamacpp`)."""
    port = free_port()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "tests.endpoint_servers", gguf, str(port)]
                                   + (["--cache-prompt"] if cache_prompt else []), cwd=root,
                                   stdout=log, stderr=subprocess.STDOUT)
    return _answering(process, port, log_path)


def start_llama_server(python: str, gguf: str, log_path) -> tuple[subprocess.Popen, int]:
    """llama-cpp-python's server on 127.0.0.1 (one thread, the model named `smollm2`), once it answers."""
    port = free_port()
    with open(log_path, "wb") as log:
        process = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", "smollm2",
                                    "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "2048"],
                                   stdout=log, stderr=subprocess.STDOUT)
    return _answering(process, port, log_path)


def _answering(process: subprocess.Popen, port: int, log_path) -> tuple[subprocess.Popen, int]:
    """`process` and `port` once the server there answers `GET /v1/models` (two minutes at most)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp's server exited ({process.returncode}): see {log_path}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            try:
                connection.request("GET", "/v1/models")
                if connection.getresponse().status == 200:  # 503 while the model loads
                    return process, port
            finally:
                connection.close()
        except OSError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"llama.cpp's server did not answer within two minutes: see {log_path}")


class FaultyProxy:
    """An HTTP proxy on 127.0.0.1 to `upstream_port` that answers the requests whose number (from
    0, in arrival order) `plan` maps to a fault instead of forwarding them: `429` (with
    Retry-After: `retry_after`), `500`, `slow` (waits `slow_seconds`, then forwards) or `drop`
    (closes the connection unanswered). `forwarded` counts the requests the server received (and
    `bodies` lists them, path and JSON body), `faults` the faults injected by kind; `alter`, when
    set, rewrites each answer the server gives (its decoded JSON, given the request's) before it is returned."""

    def __init__(self, upstream_port: int, plan=lambda number: None, retry_after: str = "0", slow_seconds: float = 3.0):
        self.upstream_port, self.plan, self.retry_after, self.slow_seconds = upstream_port, plan, retry_after, slow_seconds
        self.forwarded, self.arrived = 0, 0
        self.faults = Counter()
        self.bodies: list[tuple[str, dict]] = []
        self.alter = None
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy._lock:
                    fault = proxy.plan(proxy.arrived)
                    proxy.arrived += 1
                    if fault:
                        proxy.faults[fault] += 1
                if fault == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if fault in ("429", "500"):
                    self.send_response(int(fault))
                    if fault == "429":
                        self.send_header("Retry-After", proxy.retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if fault == "slow":
                    time.sleep(proxy.slow_seconds)
                status, answer = proxy.forward(self.path, body, self.headers.get("Content-Type", "application/json"))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:  # the client gave up waiting (a slow answer): nobody to answer
                    self.close_connection = True

        return Handler

    def reset(self, plan=lambda number: None, retry_after: str = "0", slow_seconds: float = 3.0) -> None:
        """Start counting again, injecting the faults of `plan` (as `__init__` says)."""
        with self._lock:
            self.plan, self.retry_after, self.slow_seconds = plan, retry_after, slow_seconds
            self.forwarded, self.arrived, self.faults, self.bodies, self.alter = 0, 0, Counter(), [], None

    def forward(self, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
        with self._lock:
            self.forwarded += 1
            self.bodies.append((path, json.loads(body)))
        connection = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=300)
        try:
            connection.request("POST", path, body, {"Content-Type": content_type})
            response = connection.getresponse()
            answer = response.read()
        finally:
            connection.close()
        if self.alter is not None and response.status == 200:
            answer = json.dumps(self.alter(json.loads(answer), json.loads(body))).encode()
        return response.status, answer

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve_xllamacpp(gguf: str, port: int, cache_prompt: bool = False) -> None:
    """Serve `gguf` on 127.0.0.1:`port` with llama.cpp's server (one thread, one slot) until killed;
    without reusing a previous prompt's cached prefix unless `cache_prompt` (with it, a prompt's
    answer moves with the prompt before it: up to 0.023 in probability, docs/models.md)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.cache_prompt = cache_prompt
    params.model.path = gguf
    params.model_alias = "smollm2"
    params.n_ctx = 2048
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
    params.port = port
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    serve_xllamacpp(sys.argv[1], int(sys.argv[2]), cache_prompt=sys.argv[3:] == ["--cache-prompt"])
