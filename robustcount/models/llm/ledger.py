"""What a served model's requests cost: the requests sent and the answers the response cache
gave instead, the prompt and completion tokens the server counted (`usage`), and their cost at a
price per 1,000 tokens. Thread-safe: requests run several at a time."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Ledger:
    """The counts so far; `price` is (input, output) per 1,000 tokens, in the user's currency."""

    price: tuple[float, float] = (0.0, 0.0)
    requests: int = 0
    """Requests sent (each once, however many attempts its faults took: `Transport.sent` counts those)."""
    answered: int = 0
    """Requests the server answered."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
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
        """Count a request about to be sent."""
        with self._lock:
            self.requests += 1

    def record(self) -> dict:
        """The counts as a JSON-able dict (cost rounded to 1e-6)."""
        return {"requests": self.requests, "answered": self.answered, "cache_hits": self.cache_hits,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost": round(self.cost, 6)}

    def line(self) -> str:
        """The counts in one line."""
        return (f"{self.requests} requests sent ({self.answered} answered), {self.cache_hits} from the cache, "
                f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens, cost {self.cost:.4f}")


def _count(value) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
