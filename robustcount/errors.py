"""The exceptions robustcount raises on purpose.

`RobustcountError` is bad input or an impossible request: the CLI prints its message on one line
and exits with status 1; `RobustcountWarning` says what was assumed (one line, the work goes on);
`RobustcountInterrupted` is work the user interrupted, with what was finished kept;
`UserCodeError` is an exception the user's own code raised (a `py:` model), told in the user's
words.
`LimitReached` ends the work on one example at one of its limits: `BudgetExhausted` (out of model
calls), `TimeLimitReached` (out of time), `PointLimitReached` (a space too large to enumerate),
`EndpointFailed` (a served model's request failed through all its retries) or `AnswerUnscored` (a
served model that did not say an answer's probability), `RequestLimitReached` and
`CostLimitReached` (a served model's `--max-requests`, `--max-cost`); every search turns it into an undecided
result naming the limit (`kind`, one of
`status.LIMITS`) and its message as the reason.
"""

from robustcount.status import BUDGET, COST_LIMIT, ENDPOINT, POINT_LIMIT, REQUEST_LIMIT, TIME_LIMIT


class RobustcountError(Exception):
    """A problem the user can fix, described in one line."""


class RobustcountInterrupted(RobustcountError):
    """Work interrupted by the user (Ctrl-C) after keeping what was finished (`kept`: for a
    dataset run, the `Run` of the examples done, all already in its run file); exit status 130."""

    def __init__(self, message: str, kept=None):
        super().__init__(message)
        self.kept = kept


class UserCodeError(RobustcountError):
    """An exception raised by the user's own code (`models/user_code.py` runs it): a one-line
    message naming the exception, the code robustcount ran (`py:module:function`, its import, its
    model's `predict_proba`) and the line of the user's code where it was raised."""


class RobustcountWarning(UserWarning):
    """Something that may not be what the user meant, and went ahead: the CLI prints it on one line."""


class LimitReached(RobustcountError):
    """One example's limit is reached: its next model request is refused before it runs. `kind`
    names the limit as records do (`status.LIMITS`)."""

    kind: str
    of_input = False
    """Whether the limit is one input's (the same input would meet it again), not the example's."""


class BudgetExhausted(LimitReached):
    """The per-example budget of model calls would be exceeded by the next request.

    `used` is the number of texts run through the model for this example so far, `budget` the limit
    and `requested` the number of new texts the refused request needed.
    """

    kind = BUDGET

    def __init__(self, used: int, budget: int, requested: int):
        self.used, self.budget, self.requested = used, budget, requested
        super().__init__(
            f"budget exhausted: {used} of {budget} model calls used, {requested} more requested"
        )


class PointLimitReached(LimitReached):
    """An enumeration would check `points` points, more than its limit `limit`."""

    kind = POINT_LIMIT

    def __init__(self, what: str, points: int, limit: int):
        self.points, self.limit = points, limit
        super().__init__(f"{what} = {points} points, above the limit of {limit}")


class TimeLimitReached(LimitReached):
    """The per-example time limit (`limit` seconds) has passed; the next request is refused."""

    kind = TIME_LIMIT

    def __init__(self, limit: float):
        self.limit = limit
        super().__init__(f"time limit of {limit:g} s per example reached")


class EndpointFailed(LimitReached):
    """A request to a model served over HTTP failed `attempts` times (`failure`: the last
    failure, an HTTP status or a connection error): the example is undecided, never answered."""

    kind = ENDPOINT

    def __init__(self, url: str, attempts: int, failure: str):
        self.attempts, self.failure = attempts, failure
        super().__init__(f"{url}: request failed after {attempts} attempts (last: {failure})")


class AnswerUnscored(LimitReached):
    """A served model's answer for one input has no probability the server said (its first token
    is not among the top tokens it listed): the example is undecided, never guessed."""

    kind = ENDPOINT
    of_input = True


class RequestLimitReached(LimitReached):
    """A served model's requests reached `--max-requests`: the next one is not sent."""

    kind = REQUEST_LIMIT

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"the limit of {limit} requests to the served model was reached (--max-requests)")


class CostLimitReached(LimitReached):
    """A served model's requests cost `--max-cost` or more: the next one is not sent."""

    kind = COST_LIMIT

    def __init__(self, limit: float):
        self.limit = limit
        super().__init__(f"the served model's cost limit of {limit:g} was reached (--max-cost)")
