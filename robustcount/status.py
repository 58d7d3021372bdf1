"""The one status vocabulary of every search on one example (an attack, a proof, an estimate, a
radius bracket).

A search ends decided, with its command's answer (an attack's `success`, `failed` or `skipped`; a
proof's `certified` or `adversarial`; an estimate), or UNDECIDED: stopped short by one of LIMITS,
which its record names in a `limit` field beside the `reason` in words:

- `budget`: the example's model calls (`--budget`; `errors.BudgetExhausted`);
- `time limit`: the example's seconds (`--time-limit`; `errors.TimeLimitReached`);
- `max points`: a space, a shell or the points left to enumerate larger than `--max-points`
  (`errors.PointLimitReached`; the exhaustive oracle refuses such a shell);
- `endpoint`: a model served over HTTP kept failing one request through all its retries
  (`errors.EndpointFailed`; `models/llm/transport.py`), or did not say an answer's probability
  (`errors.AnswerUnscored`);
- `max requests`, `max cost`: a served model's requests or their cost reached `--max-requests`
  or `--max-cost` (`errors.RequestLimitReached`, `errors.CostLimitReached`; `models/llm/ledger.py`).

A resume that raises `--budget`, `--time-limit`, `--max-requests` or `--max-cost` runs again the
examples whose `limit` is that one (`runs.files`). Run files written before the `limit` field name the limit in the reason only:
`limit_of` reads those through REASON_ALIASES, so an old file summarises, reports and resumes as a
new one does.
"""

from __future__ import annotations

from dataclasses import dataclass

UNDECIDED = "undecided"
"""The status of a search stopped short of its answer by a limit."""
BUDGET, TIME_LIMIT, POINT_LIMIT, ENDPOINT = "budget", "time limit", "max points", "endpoint"
REQUEST_LIMIT, COST_LIMIT = "max requests", "max cost"
LIMITS = (BUDGET, TIME_LIMIT, POINT_LIMIT, ENDPOINT, REQUEST_LIMIT, COST_LIMIT)
"""What can stop a search undecided, as records name it (`limit`)."""
REASON_ALIASES = (
    ("budget exhausted", BUDGET),
    ("time limit of ", TIME_LIMIT),
    ("above the limit of ", POINT_LIMIT),
    ("points left to enumerate", POINT_LIMIT),
    ("would pass the bound of ", POINT_LIMIT),
    ("failed after ", ENDPOINT),
)
"""The words of each limit in the reasons robustcount wrote (records without a `limit` field)."""


@dataclass(frozen=True)
class Undecided:
    """Why a record's search ended undecided: the limits that stopped it (one per search; a
    compare record holds two) and the reason in words."""

    limits: tuple[str | None, ...]
    reason: str


def limit_of(limit: str | None, reason: str | None) -> str | None:
    """The limit a record names (`limit`), or for a record written before that field, the one its
    `reason` names (REASON_ALIASES); None when neither says."""
    if limit is not None:
        return limit
    return next((named for words, named in REASON_ALIASES if reason is not None and words in reason), None)


def undecided_search(record: dict) -> Undecided | None:
    """The status of a record whose search ended with a `reason` only when undecided (`radius`,
    `estimate`, one model of `compare`): None when decided."""
    reason = record.get("reason")
    return None if reason is None else Undecided((limit_of(record.get("limit"), reason),), reason)
