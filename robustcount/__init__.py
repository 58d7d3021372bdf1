"""robustcount: attack, certify and count adversarial perturbations of text classifiers.

`robustcount.attack(...)`, `robustcount.certify(...)` and `robustcount.estimate(...)` run those
commands from Python (`robustcount.api`, imported when one of them is first asked for, so that
`import robustcount` stays light)."""

from robustcount.errors import BudgetExhausted, RobustcountError

__version__ = "0.1.0"

__all__ = ["BudgetExhausted", "RobustcountError", "__version__", "attack", "certify", "estimate"]

API = ("attack", "certify", "estimate")
"""The functions of `robustcount.api` the package offers by name."""


def __getattr__(name: str):
    if name in API:
        import robustcount.api as api

        return getattr(api, name)
    raise AttributeError(f"module 'robustcount' has no attribute {name!r}")
