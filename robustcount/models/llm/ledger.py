"""What a served model's requests cost: the requests sent and the answers the response cache
gave instead, the prompt and completion tokens the server counted (`usage`), and their cost at a
price per 1,000 tokens; and its limits: no request is sent once `max_requests` were, or once the
cost reached `max_cost` (the example that asks ends undecided, `errors.RequestLimitReached`,
`errors.CostLimitReached`), counting from `start_limits` on: the requests that load the model and
probe it before the examples are counted, never refused. The cost is checked before each request
is sent, so requests in flight together may pass `max_cost` by their own cost. A ledger counts
one process's requests. Thread-safe: requests run
several at a time."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from robustcount.errors import CostLimitReached, RequestLimitReached

LEDGER = "endpoint"
"""The key of a chunk's ledger in a run's timings, and of the run's in its summary."""


@dataclass
class Ledger:
    """The counts so far; `price` is (input, output) per 1,000 tokens, in the user's currency."""

    price: tuple[float, float] = (0.0, 0.0)
    max_requests: int | None = None
    max_cost: float | None = None
    requests: int = 0
    """Requests sent (each once, however many attempts its faults took: `Transport.sent` counts those)."""
    answered: int = 0
    """Requests the server answered."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    limits_from: tuple[int, float] | None = None
    """(requests, cost) when the limits began to count (`start_limits`); None: not yet."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def cost(self) -> float:
        return (self.prompt_tokens * self.price[0] + self.completion_tokens * self.price[1]) / 1000

    def answer(self, found: dict) -> None:
        """Count an answer the server gave, with the tokens its `usage` says (none when it says none)."""
        usage = found.get("usage") if isinstance(found.get("usage"), dict) else {}
        with self._lock:
            self.answered += 1
            self.prompt_tokens += _count(usage.get("prompt_tokens"))
            self.completion_tokens += _count(usage.get("completion_tokens"))

    def hit(self) -> None:
        with self._lock:
            self.cache_hits += 1

    def send(self) -> None:
        """Count a request about to be sent, or refuse it at a limit."""
        with self._lock:
            if self.limits_from is not None:
                if self.max_requests is not None and self.requests - self.limits_from[0] >= self.max_requests:
                    raise RequestLimitReached(self.max_requests)
                if self.max_cost is not None and self.cost - self.limits_from[1] >= self.max_cost:
                    raise CostLimitReached(self.max_cost)
            self.requests += 1

    def pause_limits(self) -> None:
        """Refuse no request until `start_limits` (the probes before a run's examples)."""
        with self._lock:
            self.limits_from = None

    def start_limits(self, again: bool = False) -> None:
        """Count the limits from the requests and cost so far (`again`: even when they count already)."""
        with self._lock:
            if self.limits_from is None or again:
                self.limits_from = (self.requests, self.cost)

    def record(self) -> dict:
        """The counts as a JSON-able dict (cost rounded to 1e-6)."""
        return {"requests": self.requests, "answered": self.answered, "cache_hits": self.cache_hits,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost": round(self.cost, 6)}



def ledger_change(after: dict, before: dict) -> dict:
    """What the ledger `record`s `before` and `after` differ by (the cost rounded to 1e-6)."""
    change = {key: after[key] - before.get(key, 0) for key in after}
    return {**change, "cost": round(change["cost"], 6)}


def ledger_sum(records: list[dict]) -> dict | None:
    """The sum of ledger `record`s (None when there are none)."""
    if not records:
        return None
    total = {key: sum(record.get(key, 0) for record in records) for key in records[0]}
    return {**total, "cost": round(total["cost"], 6)}


def ledger_line(ledger: dict) -> str:
    """A ledger `record` in one line."""
    return (f"served model: {ledger['requests']} requests sent ({ledger['answered']} answered), "
            f"{ledger['cache_hits']} answers from the cache, {ledger['prompt_tokens']} prompt + "
            f"{ledger['completion_tokens']} completion tokens, cost {ledger['cost']:.4f}")


def _count(value) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
