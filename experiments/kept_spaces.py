"""What a resumed contextual run saves by reading the spaces it kept (`runs/kept_spaces.py`): an
attack run is killed (SIGKILL, sent by itself at that point) once it has written `--after`
examples and kept the space of the next one, then resumed twice from copies of what it left, once with the kept space and once
without (as before spaces were kept). Each resume runs in a fresh process and prints the helper
CPU seconds spent building spaces (almost all of it the contextual filters' LM and encoder
scoring; the seconds their query engines time, wall clock, beside), their calls, the resume's CPU seconds in all (loading the models included), and whether the resumed file equals an uninterrupted run's:

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python experiments/kept_spaces.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = ["attack", "--recipe", "pdp", "--model", "lstm-rt", "--data", "demo:test", "--sample", "4", "--source",
       "synonyms", "--keep-names", "--keep-expressions", "--context-lm-min", "-4", "--context-similarity-min", "0.85"]
RESUME = """
import json, resource, sys, time
from robustcount.cli import main
from robustcount.models.context_models import context_models
from robustcount.spaces.build import SpaceBuilder
build, building = SpaceBuilder.build, [0.0]
def timed(self, item):
    began = time.process_time()
    try:
        return build(self, item)
    finally:
        building[0] += time.process_time() - began
SpaceBuilder.build = timed
code = main(sys.argv[1:])
helpers = [context_models().lm.total, context_models().encoder.total]
used = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "cpu": used.ru_utime + used.ru_stime, "building": building[0], "helper_seconds": sum(s.model_seconds for s in helpers),
                  "lm_calls": helpers[0].model_calls, "encoder_calls": helpers[1].model_calls}))
"""


def cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from robustcount.cli import main; raise SystemExit(main())", *args]


KILLED = """
import os, signal, sys
from robustcount.cli import main
from robustcount.runs.inflight import KeptSpaces
keep, kept, after = KeptSpaces.keep, [0], int(sys.argv[1])
def keep_then_die(self, form):
    keep(self, form)
    kept[0] += 1
    if kept[0] == after + 1:
        os.kill(os.getpid(), signal.SIGKILL)
KeptSpaces.keep = keep_then_die
main(sys.argv[2:])
"""


def killed_after(out: Path, examples: int) -> None:
    """Run the attack into `out`, killed (SIGKILL, by itself) once it has kept the space of the
    example after the first `examples` ones (its work on that example not begun)."""
    subprocess.run([sys.executable, "-c", KILLED, str(examples), *RUN, "--output", str(out)], capture_output=True)
    if out.read_bytes().count(b"\n") != examples + 1 or not out.with_name(f".{out.name}.example-{examples}.spaces").exists():
        raise SystemExit("the run was not killed where it should have been")


def resumed(folder: Path, left: Path, keep: bool) -> dict:
    """Resume a copy of the killed run (with its kept spaces or without) in a fresh process."""
    out = folder / ("kept" if keep else "rebuilt") / left.name
    out.parent.mkdir()
    for path in left.parent.iterdir():
        if path.name == left.name or path.name.startswith(f".{left.name}.") and (keep or "spaces" not in path.name):
            shutil.copy(path, out.parent / path.name)
    done = subprocess.run([sys.executable, "-c", RESUME, *RUN, "--output", str(out), "--resume", "--json"],
                          capture_output=True, text=True, check=True)
    return {**json.loads(done.stdout.splitlines()[-1]), "file": out.read_bytes()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", type=int, default=2, help="examples written before the kill")
    after = parser.parse_args().after
    folder = Path(tempfile.mkdtemp(prefix="kept-spaces-"))
    try:
        whole = folder / "whole.jsonl"
        subprocess.run(cli(*RUN, "--output", str(whole)), check=True, capture_output=True)
        left = folder / "killed" / "run.jsonl"
        left.parent.mkdir()
        killed_after(left, after)
        print(f"{' '.join(RUN)}: killed after {after} examples, with the space of the next one kept")
        for keep in (True, False):
            found = resumed(folder, left, keep)
            print(f"resume {'with' if keep else 'without'} the kept space: building spaces {found['building']:.2f} CPU s "
                  f"(helper models {found['helper_seconds']:.2f} s in their engines), the resume {found['cpu']:.1f} CPU s "
                  f"in all, LM calls {found['lm_calls']}, encoder calls {found['encoder_calls']}, "
                  f"same file as an uninterrupted run: {found['file'] == whole.read_bytes()}")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
