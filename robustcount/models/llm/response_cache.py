"""A persistent cache of a served model's answers, so that no run pays twice for one request.

One SQLite file (stdlib `sqlite3`, write-ahead log: several processes and threads read and write
it at once) maps the SHA-256 of (endpoint URL without credentials, model, exact request body) to
the server's JSON answer. The default file is `endpoint-responses.sqlite` in the weights cache's
folder (`weights_cache.cache_folder()`: `$ROBUSTCOUNT_CACHE`, else `~/.cache/robustcount`). Only
successful answers are stored; nothing about the API key is.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.models.weights_cache import cache_folder

DEFAULT_FILE = "endpoint-responses.sqlite"


def default_cache_path() -> Path:
    """Where answers are kept unless told otherwise."""
    return cache_folder() / DEFAULT_FILE


def request_key(url: str, model: str, body: dict) -> str:
    """The cache key of one request: SHA-256 of the endpoint, the model and the exact body."""
    return hashlib.sha256(json.dumps({"url": url, "model": model, "body": body}, sort_keys=True,
                                     ensure_ascii=False).encode()).hexdigest()


class ResponseCache:
    """The answers stored in the SQLite file `path` (created with its folder when missing); one
    connection per thread. `hits` counts the answers it gave."""

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._lock = threading.Lock()
        self.hits = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection()
        except (OSError, sqlite3.Error) as err:
            raise RobustcountError(f"cannot open the response cache {self.path}: {err}") from err

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
            self._local.connection = connection
        return connection

    def get(self, key: str) -> dict | None:
        """The stored answer of `key`, or None."""
        row = self._connection().execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        with self._lock:
            self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, answer: dict) -> None:
        """Store `answer` under `key` (an answer stored already by another process stays)."""
        try:
            self._connection().execute("INSERT OR IGNORE INTO answers (key, answer) VALUES (?, ?)",
                                       (key, json.dumps(answer, ensure_ascii=False)))
        except sqlite3.Error as err:
            raise RobustcountError(f"cannot write the response cache {self.path}: {err}") from err
