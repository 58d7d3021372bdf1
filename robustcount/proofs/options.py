"""The options of a certify run, declared once (`robustcount.options`): the command line offers
them (`certify`), the prover's run takes them, and the checks of a certify run file
(`proofs.records`) hold its header's options to the same declared bounds and choices."""

from __future__ import annotations

from dataclasses import field

from robustcount.goal import max_points_field
from robustcount.options import budget_field, option, options_dataclass, radius_field, time_limit_field
from robustcount.orders import MARGINS, ORDERS
from robustcount.proofs.branch import PROOF_METHODS


@options_dataclass
class CertifyOptions:
    radius: int = radius_field(3, "Certify r = 1, 2, ... up to this radius.")
    method: str = field(default="auto", metadata=option(
        "enumerate: check every point; bound: branch and bound (sound bounds decide whole boxes, the rest is "
        "enumerated; cnn-rt, lstm-rt); auto: bound where the model supports it and bounds were measured to cost "
        "less than enumeration on it (none today), else enumerate. The answers are the same.", choices=PROOF_METHODS))
    order: str = field(default=MARGINS, metadata=option(
        "Positions tried first (margins: by the margins of the points of one change, which the prover checks "
        "first; no gradients).", choices=ORDERS))
    max_points: int = max_points_field()
    time_limit: float = time_limit_field()
    budget: int | None = budget_field()
