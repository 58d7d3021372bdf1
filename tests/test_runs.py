"""Run files: resuming after a kill, parallel and Dask runs, byte-identical results."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.runs import read_run
from robustcount.runs.files import RunWriter, timings_path
from robustcount.spaces.build import DEFAULT_SOURCE

ESTIMATE = ["estimate", "--model", "bow-rt", "--eps", "0.1", "--delta", "0.1", "--seed", "3"]


def run_cli(capsys, *args) -> dict:
    assert main([*args, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out.splitlines()[-1])  # the summary line (attack prints one per example first)


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_file(capsys, tmp_path):
    args = ["estimate", "--model", "bow-rt", "--eps", "0.05", "--delta", "0.05", "--sample", "100", "--seed", "5"]
    reference = tmp_path / "reference.jsonl"
    whole = run_cli(capsys, *args, "--output", str(reference))
    killed = tmp_path / "killed.jsonl"
    child = subprocess.Popen([str(Path(sys.executable).parent / "robustcount"), *args, "--output", str(killed)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if killed.exists() and killed.read_bytes().count(b"\n") >= 6:  # the header and five examples
            break
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    partial = killed.read_bytes()
    assert 6 <= partial.count(b"\n") < 101, "the run must be killed mid-way"
    assert main([*args, "--output", str(killed), "--resume", "--json"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert killed.read_bytes() == reference.read_bytes()
    assert resumed == whole
    sessions = [t for t in read_run(killed).timings if t["record"] == "session"]
    assert len(sessions) == 2 and sessions[1]["resumed"] == partial.count(b"\n") - 1


def test_resume_drops_a_partial_last_line_and_finishes(capsys, tmp_path):
    reference, broken = tmp_path / "reference.jsonl", tmp_path / "broken.jsonl"
    run_cli(capsys, *ESTIMATE, "--sample", "6", "--output", str(reference))
    lines = reference.read_bytes().splitlines(keepends=True)
    broken.write_bytes(b"".join(lines[:3]) + lines[3][:25])  # killed while writing the third example
    run_cli(capsys, *ESTIMATE, "--sample", "6", "--output", str(broken), "--resume")
    assert broken.read_bytes() == reference.read_bytes()


def test_resume_refuses_a_different_run_and_overwrite_is_explicit(capsys, tmp_path):
    out = tmp_path / "run.jsonl"
    run_cli(capsys, *ESTIMATE, "--sample", "4", "--output", str(out))
    before = out.read_bytes()
    assert main([*ESTIMATE, "--sample", "4", "--output", str(out)]) == 1
    assert "--resume" in capsys.readouterr().err
    assert main([*ESTIMATE, "--sample", "4", "--eps", "0.2", "--output", str(out), "--resume"]) == 1
    err = capsys.readouterr().err
    assert "different run" in err and "options" in err and err.count("\n") == 1
    assert out.read_bytes() == before  # nothing lost
    run_cli(capsys, *ESTIMATE, "--sample", "4", "--output", str(out), "--resume")  # complete: nothing to do
    assert out.read_bytes() == before
    assert main([*ESTIMATE, "--sample", "4", "--resume"]) == 2  # --resume needs --output


def test_a_finished_resume_adds_no_duplicates_and_the_header_records_provenance(capsys, tmp_path):
    out = tmp_path / "run.jsonl"
    summary = run_cli(capsys, *ESTIMATE, "--sample", "5", "--output", str(out))
    run = read_run(out)
    assert "run" not in summary  # the header is in the run file only
    assert (summary["seed"], summary["models"], summary["command"]) == (3, ["bow-rt"], "estimate")
    header = run.header
    assert [r["index"] for r in run.records] == list(range(5))
    assert header["seed"] == 3 and header["robustcount"] and header["dependencies"]["torch"]
    (source,) = header["space"]["sources"]  # the default source, named with its table's digest
    assert header["models"][0]["digest"] and source["source"] == DEFAULT_SOURCE and len(source["sha256"]) == 64
    assert header["data"]["examples"] == 5 and len(header["data"]["digest"]) == 64
    assert "seconds" not in out.read_text() and timings_path(out).is_file()


def test_run_writer_rejects_corrupt_files(tmp_path):
    path = tmp_path / "run.jsonl"
    header = {"record": "run", "format": "robustcount-run/1", "command": "evaluate"}
    path.write_text(json.dumps(header) + "\n" + json.dumps({"record": "example", "index": 0}) + "\n" * 2
                    + json.dumps({"record": "example", "index": 0}) + "\n")
    with pytest.raises(RobustcountError, match="twice"):
        RunWriter(path, header, resume=True)
    path.write_text('{"some": "thing"}\n')
    with pytest.raises(RobustcountError, match="not a robustcount run file"):
        RunWriter(path, header, resume=True)
    with pytest.raises(RobustcountError, match="no such run file"):
        read_run(tmp_path / "missing.jsonl")


@pytest.mark.slow
def test_parallel_workers_write_the_same_file_as_one_process(capsys, tmp_path):
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    first = run_cli(capsys, *ESTIMATE, "--sample", "10", "--output", str(serial))
    second = run_cli(capsys, *ESTIMATE, "--sample", "10", "--output", str(parallel), "--workers", "2")
    assert parallel.read_bytes() == serial.read_bytes() and first == second
    chunks = [t for t in read_run(parallel).timings if t["record"] == "chunk"]
    assert read_run(parallel).timings[0]["backend"] == "joblib"
    assert len({t["worker"] for t in chunks}) == 2 and os.getpid() not in {int(t["worker"].split(":")[1])
                                                                         for t in chunks}


@pytest.mark.slow
def test_a_local_dask_cluster_writes_the_same_file_as_one_process(capsys, tmp_path):
    pytest.importorskip("distributed")
    serial, cluster = tmp_path / "serial.jsonl", tmp_path / "cluster.jsonl"
    args = ["certify", "--model", "bow-rt", "--sample", "8", "--radius", "2", "--seed", "2"]
    run_cli(capsys, *args, "--output", str(serial))
    run_cli(capsys, *args, "--output", str(cluster), "--cluster", "local:2")
    assert cluster.read_bytes() == serial.read_bytes()
    chunks = [t for t in read_run(cluster).timings if t["record"] == "chunk"]
    assert read_run(cluster).timings[0]["backend"] == "dask" and len({t["worker"] for t in chunks}) == 2
    assert main(["verify", str(cluster)]) == 0


@pytest.mark.slow
def test_each_joblib_worker_loads_the_model_once(capsys, tmp_path, monkeypatch):
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # workers of earlier tests would not see the variable
    log = tmp_path / "loads.txt"
    monkeypatch.setenv("ROBUSTCOUNT_TEST_LOAD_LOG", str(log))
    data = tmp_path / "d.csv"
    data.write_text("text,label\n" + "".join(f"{'good' if i % 2 else 'bad'} film {i},"
                                              f"{'positive' if i % 2 else 'negative'}\n" for i in range(40)))
    summary = run_cli(capsys, "attack", "--model", "py:tests.factories:logged_model", "--data", str(data),
                      "--source", "truncate", "--workers", "2", "--output", str(tmp_path / "run.jsonl"))
    assert summary["examples"] == 40
    loads = log.read_text().split()
    workers = [pid for pid in loads if int(pid) != os.getpid()]
    assert len(workers) == len(set(workers)) == 2  # 40 chunks, two workers, one load each
    assert loads.count(str(os.getpid())) == 1  # the driver, for the header's digest


def warned(capfd, *args) -> list[str]:
    """The lines `certify` of py:tests.factories:noisy_model writes to standard error (the
    workers' too), with each warning shown once per place as in a fresh process."""
    import warnings

    capfd.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert main(["certify", "--model", "py:tests.factories:noisy_model", "--sample", "6", "--radius", "1",
                     "--json", *args]) == 0
    return capfd.readouterr().err.splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("backend", [["--workers", "2"], ["--cluster", "local:2"]])
def test_parallel_runs_warn_what_a_serial_run_warns_once_and_nothing_more(capfd, tmp_path, backend):
    if backend[0] == "--cluster":
        pytest.importorskip("distributed")
    serial = warned(capfd, "--output", str(tmp_path / "serial.jsonl"))
    assert serial.count("robustcount: warning: the model's own warning on every call") == 1, serial
    parallel = warned(capfd, "--output", str(tmp_path / "parallel.jsonl"), *backend)
    assert parallel == serial  # no worker shows a warning itself (the FutureWarning too), nor joblib or Dask


def test_workers_with_other_versions_are_refused():
    from robustcount.runs.backends import check_versions, installed_versions

    same = installed_versions()
    check_versions({"tcp://a": same, "tcp://b": dict(same)})
    with pytest.raises(RobustcountError, match=r"tcp://b has other versions: torch 1.0 \(here"):
        check_versions({"tcp://a": same, "tcp://b": {**same, "torch": "1.0"}})


def test_cluster_and_workers_are_exclusive_and_addresses_checked(capsys):
    assert main([*ESTIMATE, "--sample", "2", "--workers", "2", "--cluster", "local:2"]) == 1
    assert "not both" in capsys.readouterr().err
    assert main([*ESTIMATE, "--sample", "2", "--cluster", "local:zero"]) == 1
    assert "local:N" in capsys.readouterr().err


def test_cluster_and_output_place_errors_come_before_any_work(capsys, tmp_path):
    out = tmp_path / "run.jsonl"
    assert main([*ESTIMATE, "--sample", "2", "--output", str(out), "--cluster", "local:0"]) == 1
    assert "local:N with N >= 1" in capsys.readouterr().err and not out.exists()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert main(["zeroe", "--model", "bow-rt", "--sample", "2", "--out", str(blocker / "zeroe")]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert main(["compare", "--model", "bow-rt", "--model", "tfidf-rt", "--sample", "2",
                 "--plot", str(blocker / "violin.png"), "--output", str(out)]) == 1
    assert "cannot write" in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_joblib_workers_end_when_their_parent_is_killed(tmp_path):
    import psutil

    out = tmp_path / "run.jsonl"
    child = subprocess.Popen([str(Path(sys.executable).parent / "robustcount"), *ESTIMATE, "--sample", "60",
                              "--workers", "2", "--output", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and child.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 3:  # workers have delivered records
            break
        time.sleep(0.05)
    workers = [p for p in psutil.Process(child.pid).children(recursive=True)]
    assert child.poll() is None and workers, "the run must be killed while its workers live"
    child.send_signal(signal.SIGKILL)
    child.wait()
    gone, alive = psutil.wait_procs(workers, timeout=30)
    assert not alive, f"workers still alive: {[p.pid for p in alive]}"


def test_resume_repairs_a_torn_timings_line_and_accepts_the_same_data_by_another_path(capsys, tmp_path):
    folder = tmp_path / "fx"
    folder.mkdir()
    (folder / "good.csv").write_text("text,label\na wonderful film,positive\na dull mess,negative\n"
                                     "moving and fine,positive\n")
    out = tmp_path / "run.jsonl"
    first = run_cli(capsys, *ESTIMATE, "--data", str(folder / "good.csv"), "--output", str(out))
    with timings_path(out).open("a") as handle:
        handle.write('{"record": "chu')  # a run killed while writing its timings
    again = run_cli(capsys, *ESTIMATE, "--data", f"{folder}/./good.csv", "--output", str(out), "--resume")
    assert {**again, "data": None} == {**first, "data": None}  # the same run, named by another path
    lines = timings_path(out).read_text().splitlines()
    assert all(json.loads(line) for line in lines) and lines[-1].startswith('{"backend"')
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0


def test_verify_reads_a_run_file_killed_mid_line(capsys, tmp_path):
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "bow-rt", "--sample", "4", "--radius", "1", "--source", "truncate",
                 "--output", str(out)]) == 0
    data = out.read_bytes()
    out.write_bytes(data[: len(data) - 40])  # the last record half written
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "last line is incomplete" in capsys.readouterr().err


def test_texts_with_other_line_breaks_round_trip_through_a_run_file(capsys, tmp_path):
    data = tmp_path / "breaks.jsonl"
    texts = ["a wonderful\u0085 film", "a dull\u2028 mess", "fine\u2029 work"]
    data.write_text("".join(json.dumps({"text": t, "label": "positive"}, ensure_ascii=False) + "\n" for t in texts),
                    encoding="utf-8")
    out = tmp_path / "run.jsonl"
    assert main(["evaluate", "--model", "bow-rt", "--data", str(data), "--output", str(out)]) == 0
    assert [r["input"] for r in read_run(out).records] == texts
    assert main(["report", str(out)]) == 0


def test_the_timings_keep_each_proofs_seconds_beside_its_radius(capsys, tmp_path):
    out = tmp_path / "certs.jsonl"
    run_cli(capsys, "certify", "--model", "bow-rt", "--sample", "4", "--radius", "2", "--output", str(out))
    run = read_run(out)
    chunks = [t for t in run.timings if t["record"] == "chunk"]
    by_index = {i: detail for t in chunks for i, detail in zip(t["indices"], t["examples"])}
    for record in run.records:
        assert "seconds" not in json.dumps(record)  # results never hold times
        timed = (by_index[record["index"]] or {}).get("proofs") or []
        assert len(timed) == len(record["proofs"]) and all(t["seconds"] >= 0 for t in timed)
    assert any(record["proofs"] for record in run.records)


def test_a_fresh_interpreter_reads_a_run_file_through_robustcount_commands():
    """As the README's snippet does: nothing else imported first."""
    stored = Path(__file__).parent / "data" / "runs" / "certify.jsonl"
    code = ("from robustcount.commands import read_run; "
            f"run = read_run({str(stored)!r}); print(run.header['command'], len(run.records))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "certify" and int(done.stdout.split()[1]) > 0
