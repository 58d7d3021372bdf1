"""Wall time of one dataset run in this process, on two joblib workers and on a two-worker local
Dask cluster, in the same process (ratios against the serial run), and a check that the three run
files are byte-identical.

Run: `.venv/bin/python experiments/bench_runs.py [--examples 40] [--model minilm-rt]`
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from robustcount.commands.estimate import EstimateOptions
from robustcount.data import DataSpec
from robustcount.models.spec import ModelSpec
from robustcount.runs.backends import DaskBackend, JoblibBackend, SerialBackend
from robustcount.runs.runner import RunOutput, execute
from robustcount.runs.spec import RunSpec
from robustcount.spaces.build import SpaceSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--model", default="minilm-rt")
    parser.add_argument("--eps", type=float, default=0.05)
    parser.add_argument("--delta", type=float, default=0.05)
    args = parser.parse_args()
    data = DataSpec("demo:test", sample=args.examples)
    examples = data.load(seed=0)
    spec = RunSpec("estimate", (ModelSpec(args.model, device="cpu"),), 0, SpaceSpec(("truncate",)),
                   EstimateOptions(eps=args.eps, delta=args.delta))
    backends = {"serial": SerialBackend(), "joblib, 2 workers": JoblibBackend(2),
                "dask local:2": DaskBackend("local:2")}
    seconds, files = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, backend in backends.items():
            path = Path(scratch) / f"{len(files)}.jsonl"
            began = time.perf_counter()
            execute(spec, examples, data.header(), output=RunOutput(path), backend=backend, progress=False)
            seconds[name] = time.perf_counter() - began
            files[name] = path.read_bytes()
    identical = len(set(files.values())) == 1
    print(f"estimate, {args.model}, {args.examples} demo:test examples, eps {args.eps}, delta {args.delta}")
    for name, value in seconds.items():
        print(f"  {name:<18} {value:7.1f} s   serial/this = {seconds['serial'] / value:.2f}")
    print(f"  run files byte-identical: {identical}")
    if not identical:
        raise SystemExit("the run files differ")


if __name__ == "__main__":
    main()
