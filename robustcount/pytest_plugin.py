"""The robustcount pytest plugin (registered through the `pytest11` entry point).

Options: `--robustcount-seed N` (default 0) and `--robustcount-budget N` (model calls per check,
default none), read by the `robustcount_seed` and `robustcount_budget` fixtures; the seed also
seeds every hypothesis test that has no `@seed` of its own, so one number reproduces a whole
session's draws; `--robustness-skip`
skips tests marked `@pytest.mark.robustness` (slow robustness checks), which also run with
`-m robustness` alone.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("robustcount")
    group.addoption("--robustcount-seed", type=int, default=0, help="Seed for robustcount checks (default 0).")
    group.addoption("--robustcount-budget", type=int, default=None,
                    help="Model calls per robustcount check (default: no limit).")
    group.addoption("--robustness-skip", action="store_true", help="Skip tests marked robustness.")


def pytest_configure(config):
    config.addinivalue_line("markers", "robustness: a slow robustness check (robustcount); skip with --robustness-skip")


def pytest_collection_modifyitems(config, items):
    seed = config.getoption("--robustcount-seed")
    for item in items:
        test = getattr(item, "obj", None)
        if getattr(test, "is_hypothesis_test", False) and getattr(test, "_hypothesis_internal_use_seed", None) is None:
            test._hypothesis_internal_use_seed = seed  # what hypothesis.seed(seed) sets
    if not config.getoption("--robustness-skip"):
        return
    skip = pytest.mark.skip(reason="robustness checks skipped (--robustness-skip)")
    for item in items:
        if "robustness" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def robustcount_seed(request) -> int:
    """The seed given with --robustcount-seed."""
    return request.config.getoption("--robustcount-seed")


@pytest.fixture
def robustcount_budget(request) -> int | None:
    """The per-check budget given with --robustcount-budget."""
    return request.config.getoption("--robustcount-budget")
