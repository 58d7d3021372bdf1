"""A fitted scikit-learn estimator or pipeline saved in one file, as `--model PATH.skops` or
`--model PATH.joblib` takes it, with no Python module of the user's.

A `.skops` file (`skops.io.dump`) loads only the types skops trusts by default (scikit-learn's,
NumPy's, SciPy's); one that names any other type is refused in one line listing them, unless
`trust` (`--trust-remote-code`) trusts exactly those, through skops' own `trusted` list. A
`.joblib` file is a pickle, which runs whatever code it names when loaded: it loads only with
`trust`. Either way the model is a `SklearnClassifier` (labels from the estimator's `classes_`),
whose identity in run files and certificates is the estimator's canonical digest, the same
whichever file and process it was loaded from.
"""

from __future__ import annotations

from pathlib import Path

import joblib

from robustcount.errors import RobustcountError
from robustcount.models.families.sklearn_skops import estimator_from
from robustcount.models.sklearn_adapter import SklearnClassifier

TRUST_OPTION = "--trust-remote-code"


def load_sklearn_file(spec: str, trust: bool = False) -> SklearnClassifier:
    """The estimator saved in the file `spec` (see the module docstring), as a Classifier named
    `spec`; every failure is one line naming the file."""
    path = Path(spec).expanduser()
    if not path.is_file():
        raise RobustcountError(f"{spec}: no such model file")
    if path.suffix.lower() == ".joblib":
        if not trust:
            raise RobustcountError(f"{spec}: a joblib file is a pickle, which runs code when it is loaded; give "
                                   f"{TRUST_OPTION} if you trust it, or save the model with skops")
        try:
            estimator = joblib.load(path)
        except Exception as err:  # a damaged pickle raises whatever its reader raises
            raise RobustcountError(f"{spec}: not a readable joblib file ({type(err).__name__}: {err})") from None
    else:
        try:
            data = path.read_bytes()
        except OSError as err:
            raise RobustcountError(f"{spec}: cannot read it ({err.strerror or err})") from None
        estimator = estimator_from(data, spec, trusted=trust, trust_option=TRUST_OPTION)
    return SklearnClassifier(estimator, name=spec)
