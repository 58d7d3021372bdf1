"""Shared fixtures: small real models, loaded once per session."""

import pytest
from hypothesis import settings

from robustcount.models.zoo import load_model

# Timing varies on shared machines: no per-example deadline, so property tests never fail on speed.
settings.register_profile("robustcount", deadline=None)
settings.load_profile("robustcount")


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
