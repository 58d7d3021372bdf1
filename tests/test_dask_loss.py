"""Dask runs that lose their workers end in one line saying what happened, what was kept and how
to continue, never by waiting in silence or with an internal error."""

import re
import threading

import pytest

from robustcount.cli import main
from robustcount.runs import read_run

pytest.importorskip("distributed")

pytestmark = pytest.mark.slow


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "three.csv"
    path.write_text("id,text,label\n0,a good film,positive\n1,boom,positive\n2,a bad film,negative\n")
    return path


def certify(data, out, cluster):
    return main(["certify", "--model", "py:tests.factories:dying_model", "--radius", "1", "--data", str(data),
                 "--output", str(out), "--cluster", cluster])


def test_a_chunk_whose_workers_keep_dying_ends_the_run_with_what_was_kept(capsys, data, tmp_path):
    import dask

    out = tmp_path / "run.jsonl"
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):  # Dask's retry: one more worker
        assert certify(data, out, "local:1") == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    # Example 1 kills its worker; example 0, in flight on the same worker, may be the one reported.
    said = re.fullmatch(r"robustcount: error: the Dask worker running example ([01]) died on each of its 2 tries; "
                        rf"([01]) of 3 examples are in {re.escape(str(out))}: continue with --output "
                        rf"{re.escape(str(out))} --resume", err)
    assert said, err
    kept = [r["index"] for r in read_run(out).records] if out.exists() else []
    assert int(said.group(2)) == len(kept) and kept in ([], [0])


def test_a_cluster_without_a_live_worker_says_so_after_the_stated_wait(capsys, data, tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr("robustcount.runs.backends.NO_WORKER_WAIT", 2.0)
    with LocalCluster(n_workers=0, dashboard_address=None) as empty:
        result = []
        runner = threading.Thread(target=lambda: result.append(certify(data, tmp_path / "run.jsonl",
                                                                       empty.scheduler_address)), daemon=True)
        runner.start()
        runner.join(timeout=60)  # before, the run waited for ever
        assert result == [1]
    err = capsys.readouterr().err
    assert f"the Dask cluster {empty.scheduler_address} has had no live worker for 2 s" in err
