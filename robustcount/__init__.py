"""robustcount: attack, certify and count adversarial perturbations of text classifiers."""

from robustcount.errors import BudgetExhausted, RobustcountError

__version__ = "0.1.0"

__all__ = ["BudgetExhausted", "RobustcountError", "__version__"]
