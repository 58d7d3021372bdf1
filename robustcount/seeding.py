"""Seeds derived from a run's seed, so that each example (and attack, level, ...) has its own and
any single result can be reproduced alone."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 64-bit seed from the run's `seed` and `parts`, stable across processes and platforms."""
    key = ":".join(str(part) for part in (seed, *parts))
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16)
