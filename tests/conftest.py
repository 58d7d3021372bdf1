"""Shared fixtures: small real models, loaded once per session."""

import os
import tempfile

import pytest
from hypothesis import settings

from robustcount.models.zoo import load_model

# Timing varies on shared machines: no per-example deadline, so property tests never fail on speed.
settings.register_profile("robustcount", deadline=None)
settings.load_profile("robustcount")

# Weights trained at load go to one fresh folder for the whole session: the parallel workers and
# every process a test starts share it (they inherit the variable), and nothing outside is touched.
os.environ.setdefault("ROBUSTCOUNT_CACHE", tempfile.mkdtemp(prefix="robustcount-test-cache-"))
# Runs without --output go to run files of their own (runs/ by default): here, to one fresh folder.
os.environ.setdefault("ROBUSTCOUNT_RUNS", tempfile.mkdtemp(prefix="robustcount-test-runs-"))


@pytest.fixture(scope="session")
def bow_rt():
    return load_model("bow-rt", device="cpu")


@pytest.fixture(scope="session")
def tfidf_rt():
    return load_model("tfidf-rt", device="cpu")


@pytest.fixture(scope="session")
def vader():
    return load_model("vader")


@pytest.fixture(scope="session")
def minilm_rt():
    return load_model("minilm-rt", device="cpu")
pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(items):
    """The end-to-end tests (marked slow) first, so that parallel workers (`make test` runs one per
    core) start them together and finish on the quick tests rather than wait on a long one."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
