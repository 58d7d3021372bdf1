"""One way to replace a file whole, one family of per-example limits, one interrupt exception."""

import pytest

import robustcount.commands  # noqa: F401  (registers the built-in commands)
from robustcount.atomic import StagedFile, is_staged, replaced_whole, staging_path
from robustcount.data import Example
from robustcount.errors import (
    BudgetExhausted,
    LimitReached,
    RobustcountError,
    RobustcountInterrupted,
    TimeLimitReached,
)
from robustcount.models.spec import ModelSpec
from robustcount.runs.runner import RunOutput, execute
from robustcount.runs.spec import RunSpec


def test_a_file_is_replaced_whole_or_left_as_it_was(tmp_path):
    path = tmp_path / "deep" / "state.bin"
    with replaced_whole(path) as out:
        out.write(b"first")
        assert not path.exists() and is_staged(path)  # nothing half-written is ever at `path`
    assert path.read_bytes() == b"first" and not is_staged(path)
    with pytest.raises(ValueError), replaced_whole(path) as out:
        out.write(b"second, half")
        raise ValueError("the writer fails")
    assert path.read_bytes() == b"first" and not is_staged(path)


def test_a_staged_file_goes_on_writing_after_its_commit(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("old\n")
    staged = StagedFile(path, "w")
    staged.write("header\n")
    assert path.read_text() == "old\n"
    staged.commit()
    staged.write("record\n")
    staged.close()
    assert path.read_text() == "header\nrecord\n" and not staging_path(path).exists()


def test_time_and_budget_limits_are_siblings_with_their_own_attributes():
    budget, time = BudgetExhausted(5, 5, 2), TimeLimitReached(1.5)
    assert isinstance(budget, LimitReached) and isinstance(time, LimitReached)
    assert not isinstance(time, BudgetExhausted)
    assert (budget.used, budget.budget, budget.requested, time.limit) == (5, 5, 2, 1.5)
    assert str(time) == "time limit of 1.5 s per example reached"


def test_an_interrupted_run_raises_the_one_interrupt_exception_with_what_it_kept(tmp_path):
    examples = [Example(str(i), f"a {'good' if i % 2 else 'dull'} film, take {i}", ["negative", "positive"][i % 2])
                for i in range(400)]
    spec = RunSpec("evaluate", (ModelSpec("py:tests.factories:interrupted_model", batch_size=10),))
    with pytest.raises(RobustcountInterrupted) as raised:
        execute(spec, examples, {"spec": "inline"}, output=RunOutput(tmp_path / "run.jsonl"), progress=False)
    assert isinstance(raised.value, RobustcountError)
    kept = raised.value.kept
    assert 0 < len(kept.records) < 400 and "interrupted after" in str(raised.value)
