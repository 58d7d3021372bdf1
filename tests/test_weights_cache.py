"""Weights trained at load are cached on disk once and read back identically."""

from safetensors.torch import load_file

from robustcount.models.small import train_bow_rt


def test_trained_weights_are_cached_and_a_damaged_entry_is_retrained(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBUSTCOUNT_CACHE", str(tmp_path))
    first = train_bow_rt()
    (entry,) = tmp_path.glob("bow-rt-*.safetensors")
    stored = load_file(entry)
    assert set(stored) == set(first.module.state_dict())
    assert train_bow_rt().digest() == first.digest()  # read back: the same weights
    entry.write_bytes(b"not a safetensors file")
    assert train_bow_rt().digest() == first.digest()  # retrained, and the entry replaced
    assert set(load_file(entry)) == set(stored)
    assert not list(tmp_path.glob(".*.new"))  # no staging file left behind
