"""Inside a long example: its progress is shown while it runs, and a run stopped mid-example
resumes from the example's checkpoint to the file an uninterrupted run writes, reading the
spaces its contextual filters scored instead of scoring them again."""

import json

import pytest

from robustcount.cli import main
from robustcount.journal import Journal
from robustcount.models.context_models import context_models
from robustcount.runs import read_run
from robustcount.runs.inflight import Checkpoints, KeptSpaces, header_key
from robustcount.runs.progress import Progress
from robustcount.spaces.build import Filters, SpaceBuilder

TEXT = "a good film with a fine cast, a great story and a clever script"  # |Omega_2| = 179


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text(f"id,text,label\n0,\"{TEXT}\",positive\n")
    return path


def certify(data, out, *more):
    return main(["certify", "--model", "py:tests.factories:sleepy_model", "--batch-size", "8", "--radius", "2",
                 "--data", str(data), "--output", str(out), *more])


def test_off_a_terminal_the_points_checked_are_reported_while_the_example_runs(capsys, data, tmp_path, monkeypatch):
    monkeypatch.setattr("robustcount.runs.progress.LINE_INTERVAL", 0.5)
    assert certify(data, tmp_path / "run.jsonl") == 0  # one example of about 3 s
    lines = [line for line in capsys.readouterr().err.splitlines() if "in flight" in line]
    assert any("in flight: example 0: " in line and " of 179 points, " in line and "/s, about " in line
               for line in lines), lines
    assert len(lines) >= 2  # every interval, while the one example has not finished


def test_an_example_stopped_mid_way_resumes_from_its_checkpoint_to_the_same_file(capsys, data, tmp_path,
                                                                               monkeypatch):
    reference, stopped = tmp_path / "reference.jsonl", tmp_path / "stopped.jsonl"
    assert certify(data, reference) == 0
    monkeypatch.setattr("robustcount.journal.CHECKPOINT_INTERVAL", 0.0)  # a checkpoint after every batch
    monkeypatch.setenv("ROBUSTCOUNT_TEST_STOP_AFTER", "120")
    assert certify(data, stopped) == 130  # stopped inside the one example: no record yet
    assert not stopped.exists()
    checkpoint = stopped.with_name(f".{stopped.name}.example-0.checkpoint")
    saved = json.loads(checkpoint.read_text())["state"]["prover"]
    assert saved["position"]["radius"] == 2 and saved["position"]["checked"] > 0
    monkeypatch.delenv("ROBUSTCOUNT_TEST_STOP_AFTER")
    capsys.readouterr()
    assert certify(data, stopped, "--resume") == 0
    assert stopped.read_bytes() == reference.read_bytes()
    assert not checkpoint.exists()  # removed once the example is in the run file
    calls = [t["model_calls"] for t in read_run(stopped).timings if t["record"] == "chunk"]
    whole = [t["model_calls"] for t in read_run(reference).timings if t["record"] == "chunk"]
    assert calls[-1] < whole[0] - 100, "the resumed example must continue, not start again"


def test_a_checkpoint_of_another_run_definition_is_never_used(tmp_path):
    header = {"record": "run", "options": {"radius": 2}, "data": {"spec": "a.csv", "sha256": "x"}}
    mine = Checkpoints(str(tmp_path / "run.jsonl"), header_key(header))
    mine.save(0, {"correct": True})
    assert mine.load(0) == {"correct": True}
    moved = {**header, "data": {"spec": "./a.csv", "sha256": "x"}}  # the same data by another path
    assert Checkpoints(mine.run_path, header_key(moved)).load(0) == {"correct": True}
    other = Checkpoints(mine.run_path, header_key({**header, "options": {"radius": 3}}))
    assert other.load(0) is None and mine.load(1) is None
    mine.path(0).write_text('{"key": "')  # damaged
    assert mine.load(0) is None
    torn = tmp_path / "..run.jsonl.example-3.checkpoint.123.new"  # a kill while a checkpoint was written
    torn.write_text("{")
    mine.remove_all()  # the run is complete
    assert not mine.path(0).exists() and not torn.exists()


def test_progress_shows_each_example_in_flight_with_its_rate_and_time_left(monkeypatch):
    import io

    now = [0.0]
    monkeypatch.setattr("robustcount.runs.progress.time.monotonic", lambda: now[0])
    stream = io.StringIO()
    progress = Progress("certify", total=50, done=19, interval=30, stream=stream)
    def beat(done: int, seconds: float) -> dict:
        return {"index": 19, "seconds": seconds + 1, "queries": 9000, "position": {
            "done": done, "total": 180000, "unit": "points", "counted": done, "count_seconds": seconds}}

    now[0] = 1.0
    progress.show([beat(100, 0.01)])  # its first batch: no rate yet
    now[0] = 31.0
    progress.show([beat(60100, 30.01), {"index": 20, "seconds": 2.0, "queries": 12}])
    assert stream.getvalue() == ("robustcount certify: 19 of 50 examples, 0m31s; in flight: example 19: 60100 of "
                                 "180000 points, 2000/s, about 0m59s left; example 20: 12 queries, 0m02s\n")
    now[0] = 40.0
    progress.show([])
    assert stream.getvalue().count("\n") == 1  # the next line after another interval
    journal = Journal()
    journal.beat(0, 10, "samples")
    assert journal.position.done == 0 and not journal.due()  # keeps nothing outside a run
    resumed = Journal()
    resumed.beat(6, 10, "samples")  # a resumed search counts its rate from where it stood
    resumed.beat(8, 10, "samples")
    assert (resumed.position.done, resumed.position.counted) == (8, 2)


def test_an_estimate_stopped_mid_way_resumes_from_its_samples_to_the_same_file(capsys, data, tmp_path, monkeypatch):
    def estimate(out, *more):
        return main(["estimate", "--model", "py:tests.factories:sleepy_model", "--batch-size", "8", "--method",
                     "hoeffding", "--eps", "0.1", "--delta", "0.1", "--data", str(data),
                     "--output", str(out), *more])

    reference, stopped = tmp_path / "reference.jsonl", tmp_path / "stopped.jsonl"
    assert estimate(reference) == 0  # 150 samples, 32 at a time
    monkeypatch.setattr("robustcount.journal.CHECKPOINT_INTERVAL", 0.0)
    monkeypatch.setenv("ROBUSTCOUNT_TEST_STOP_AFTER", "80")
    assert estimate(stopped) == 130
    checkpoint = stopped.with_name(f".{stopped.name}.example-0.checkpoint")
    assert json.loads(checkpoint.read_text())["state"]["estimate"]["samples"] in (32, 64)
    monkeypatch.delenv("ROBUSTCOUNT_TEST_STOP_AFTER")
    assert estimate(stopped, "--resume") == 0
    assert stopped.read_bytes() == reference.read_bytes() and not checkpoint.exists()


def test_a_worker_process_publishes_its_beats_through_files(tmp_path):
    import time

    from robustcount.journal import current
    from robustcount.runs.inflight import BeatFiles, in_flight

    files = BeatFiles(str(tmp_path))
    with in_flight(7, [], None):
        current().beat(40, 100, "samples")
        files.publish()
        time.sleep(1.5)
        (beat,) = files.read()
    assert beat["index"] == 7 and beat["position"]["done"] == 40 and beat["position"]["unit"] == "samples"
    time.sleep(1.5)
    assert files.read() == []  # the chunk is done
    BeatFiles._publishing = None  # this process publishes no more


CONTEXTUAL = ["--source", "synonyms", "--keep-names", "--context-lm-min", "-4", "--context-similarity-min", "0.85"]
TEXTS = ["a wonderful and moving film", "the sequel to Spy Kids is a dull and tired mess", "a clever and funny script"]


def contextual_certify(data, out, *more):
    return main(["certify", "--model", "bow-rt", "--radius", "1", *CONTEXTUAL, "--data", str(data),
                 "--output", str(out), *more])


def lm_calls() -> int:
    """The calls the contextual filters' language model has made in this process, through its engine."""
    return context_models().lm.total.model_calls


def as_if_a_fresh_process() -> None:
    """Forget the helper models' cached answers, as a process started after a kill has none."""
    context_models().lm.clear_cache()
    context_models().encoder.clear_cache()


def stopped_after_keeping(monkeypatch, data, out, spaces: int) -> int:
    """A contextual certify run interrupted (as Ctrl-C) as soon as it has kept `spaces` spaces."""
    keep = KeptSpaces.keep

    def keep_then_stop(self, form):
        keep(self, form)
        keep_then_stop.kept += 1
        if keep_then_stop.kept == spaces:
            raise KeyboardInterrupt

    keep_then_stop.kept = 0
    with monkeypatch.context() as patched:
        patched.setattr(KeptSpaces, "keep", keep_then_stop)
        return contextual_certify(data, out)


@pytest.fixture
def texts(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text("text,label\n" + "".join(f"{text},positive\n" for text in TEXTS))
    return path


def test_a_resumed_contextual_run_reads_the_spaces_it_built_instead_of_scoring_them_again(capsys, texts, tmp_path,
                                                                                         monkeypatch):
    reference, stopped = tmp_path / "reference.jsonl", tmp_path / "stopped.jsonl"
    assert contextual_certify(texts, reference) == 0
    assert stopped_after_keeping(monkeypatch, texts, stopped, 2) == 130  # example 0 done, example 1's space built
    kept = stopped.with_name(f".{stopped.name}.example-1.spaces")
    assert kept.exists() and len(read_run(stopped).records) == 1
    builder = SpaceBuilder(["synonyms"], Filters(keep_names=True, context_lm_min=-4, context_similarity_min=0.85),
                           context=context_models())
    as_if_a_fresh_process()
    before = lm_calls()
    builder.build(TEXTS[2])
    last_text = lm_calls() - before
    as_if_a_fresh_process()
    before = lm_calls()
    builder.build(TEXTS[1])
    assert last_text > 0 and lm_calls() > before, "both texts must need the language model"
    as_if_a_fresh_process()
    before = lm_calls()
    assert contextual_certify(texts, stopped, "--resume") == 0
    assert lm_calls() - before == last_text, "the kept space of example 1 must be read, not scored again"
    assert stopped.read_bytes() == reference.read_bytes()
    assert not kept.exists()  # removed once the example is in the run file
    capsys.readouterr()
    assert main(["verify", str(stopped)]) == 0, capsys.readouterr().out


def test_a_kept_space_of_another_text_or_definition_or_with_a_candidate_no_source_gives_is_not_read(
        texts, tmp_path, monkeypatch):
    reference, stopped = tmp_path / "reference.jsonl", tmp_path / "stopped.jsonl"
    assert contextual_certify(texts, reference) == 0
    as_if_a_fresh_process()
    before = lm_calls()
    assert contextual_certify(texts, tmp_path / "again.jsonl") == 0
    whole = lm_calls() - before
    assert stopped_after_keeping(monkeypatch, texts, stopped, 1) == 130  # example 0's space built, no record
    honest = json.loads(stopped.with_name(f".{stopped.name}.example-0.spaces").read_text())
    form = honest["spaces"][0]
    assert form["item"] == TEXTS[0] and form["positions"]
    forgeries = {"honest": form, "another text": {**form, "item": TEXTS[2]},
                 "another definition": {**form, "definition": {**form["definition"], "seed": 1}},
                 "a candidate no source gives": {**form, "positions": [
                     [kind, index, [*candidates, "splendiferous"], [*sources, "synonyms"]]
                     for kind, index, candidates, sources in form["positions"]]}}
    for name, forged in forgeries.items():
        resumed = tmp_path / f"{name.replace(' ', '-')}.jsonl"
        resumed.with_name(f".{resumed.name}.example-0.spaces").write_text(json.dumps({**honest, "spaces": [forged]}))
        as_if_a_fresh_process()
        before = lm_calls()
        assert contextual_certify(texts, resumed, "--resume") == 0
        assert (lm_calls() - before < whole) == (name == "honest"), f"{name}: only an honest kept space is read"
        assert resumed.read_bytes() == reference.read_bytes()
