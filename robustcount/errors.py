"""The exceptions robustcount raises on purpose.

`RobustcountError` is bad input or an impossible request: the CLI prints its message on one line
and exits with status 1; `RobustcountWarning` says what was assumed (one line, the work goes on).
`BudgetExhausted` ends work that ran out of model calls (`TimeLimitReached`: out of time);
algorithms turn it into an explicit "budget exhausted" or undecided result.
"""


class RobustcountError(Exception):
    """A problem the user can fix, described in one line."""


class RobustcountInterrupted(RobustcountError):
    """Work interrupted by the user (Ctrl-C) after keeping what was finished; exit status 130."""


class RobustcountWarning(UserWarning):
    """Something that may not be what the user meant, and went ahead: the CLI prints it on one line."""


class BudgetExhausted(RobustcountError):
    """The per-example budget of model calls would be exceeded by the next request.

    `used` is the number of texts run through the model for this example so far, `budget` the limit
    and `requested` the number of new texts the refused request needed.
    """

    def __init__(self, used: int, budget: int, requested: int):
        self.used, self.budget, self.requested = used, budget, requested
        super().__init__(
            f"budget exhausted: {used} of {budget} model calls used, {requested} more requested"
        )


class TimeLimitReached(BudgetExhausted):
    """The per-example time limit has passed; the next request is refused (as a budget would be)."""

    def __init__(self, limit: float):
        self.limit = limit
        RobustcountError.__init__(self, f"time limit of {limit:g} s per example reached")
