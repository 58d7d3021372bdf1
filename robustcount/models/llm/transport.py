"""Requests to a model served over HTTP (an OpenAI-compatible API), surviving its faults.

`Transport.post` sends one JSON request and returns the decoded answer. A 429, a 5xx, a timeout
or a dropped connection is retried, up to `Retries.attempts` attempts in all, after a wait: the
server's `Retry-After` when it gives one (seconds or an HTTP date), else an exponential backoff
with full jitter (a uniform draw in [0, min(cap, base * 2^attempt)]), never more than `cap`
seconds. A request that fails every attempt raises `EndpointFailed`, a limit: its example ends
undecided with the reason, never with an answer. Any other refusal (400, 401, 404, ...) is the
user's to fix: one line, `RobustcountError`. The API key goes in the `Authorization` header only;
nothing here writes it anywhere, and messages name the URL without credentials.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from robustcount.errors import EndpointFailed, RobustcountError

RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""The HTTP statuses retried (a timeout, too many requests, the server's own failures)."""


@dataclass(frozen=True)
class Retries:
    """How long one request may take (`timeout` seconds per attempt) and how it is retried:
    `attempts` in all, waiting as the module docstring says (`base` and `cap` seconds)."""

    attempts: int = 8
    base: float = 0.5
    cap: float = 30.0
    timeout: float = 120.0

    def __post_init__(self):
        if self.attempts < 1 or self.base < 0 or self.cap < 0 or self.timeout <= 0:
            raise RobustcountError(f"bad retry settings: {self}")


class Transport:
    """One HTTP client to `url` (thread-safe; at most `concurrency` connections), counting what it
    sends: `sent` attempts in all, of which `retried` were retries."""

    def __init__(self, url: str, api_key: str | None, *, concurrency: int = 4, retries: Retries = Retries(),
                 sleep: Callable[[float], None] = time.sleep):
        if concurrency < 1:
            raise RobustcountError(f"concurrency must be at least 1, got {concurrency}")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url.rstrip("/")
        self.retries = retries
        self._sleep = sleep
        self._random = random.Random()  # jitter only: it never changes an answer
        self._client = httpx.Client(headers=headers, timeout=retries.timeout,
                                    limits=httpx.Limits(max_connections=concurrency,
                                                        max_keepalive_connections=concurrency))
        self._lock = threading.Lock()
        self.sent = 0
        self.retried = 0

    def post(self, path: str, body: dict) -> dict:
        """The JSON answer of POST `path` with `body`, retried as the module docstring says."""
        failure = ""
        for attempt in range(self.retries.attempts):
            if attempt:
                with self._lock:
                    self.retried += 1
            with self._lock:
                self.sent += 1
            answer, failure, retry_after = self._attempt(path, body)
            if answer is not None:
                return answer
            if attempt + 1 < self.retries.attempts:
                self._sleep(self.wait(attempt, retry_after))
        raise EndpointFailed(self.url + path, self.retries.attempts, failure)

    def _attempt(self, path: str, body: dict) -> tuple[dict | None, str, float | None]:
        """One attempt: (the answer, "", None), or (None, the failure in words, Retry-After's seconds)."""
        try:
            response = self._client.post(self.url + path, json=body)
            content = response.content
        except httpx.TransportError as err:  # timeouts, refused and dropped connections
            return None, f"{type(err).__name__}: {err}" if str(err) else type(err).__name__, None
        if response.status_code in RETRIED_STATUSES:
            return None, f"HTTP {response.status_code}", retry_after_seconds(response.headers.get("retry-after"))
        if response.status_code != 200:
            raise RobustcountError(f"{self.url + path}: HTTP {response.status_code}: {_said(content)}")
        try:
            answer = json.loads(content)
        except ValueError:
            return None, "an answer that is not JSON", None
        if not isinstance(answer, dict):
            return None, "an answer that is not a JSON object", None
        return answer, "", None

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt `attempt` (0-based)."""
        if retry_after is not None:
            return min(self.retries.cap, retry_after)
        return self._random.uniform(0, min(self.retries.cap, self.retries.base * 2 ** attempt))

    def close(self) -> None:
        self._client.close()


def retry_after_seconds(value: str | None) -> float | None:
    """A `Retry-After` header's seconds (a number of seconds, or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when is not None else None


def _said(content: bytes) -> str:
    """What a refusal's body says, on one short line."""
    try:
        found = json.loads(content)
        message = found.get("error", found) if isinstance(found, dict) else found
        message = message.get("message", message) if isinstance(message, dict) else message
    except ValueError:
        message = content.decode("utf-8", "replace")
    text = " ".join(str(message).split())
    return text[:200] or "(no message)"
