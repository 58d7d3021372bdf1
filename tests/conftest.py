"""Shared fixtures: small real models, loaded once per session."""

import pytest

from robustcount.models.zoo import load_model


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
