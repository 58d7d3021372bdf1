"""Write bow-rt's and tfidf-rt's fitted weights into the package, so that every machine loads the
same two models.

Both were fitted on demo:train when first loaded (`models/small.py`, deterministic on one machine),
but the arithmetic of the fit depends on the CPU's kernels: on a machine with AVX-512, torch's
and OpenBLAS's kernels differ from an AVX2 machine's in the last bits, so bow-rt's Adam steps and
tfidf-rt's solver ended at other weights, with another digest, and a certificate made on one
machine did not verify on the other. Now they are fitted once, here, and ship:

- `bow_rt.safetensors` (its tensors) and `bow_rt_vocabulary.txt.gz` (its vocabulary, one word a
  line in id order): `small.train_bow_rt` on this machine (a fresh weights cache; its digest
  `a0997b79...` is the one AVX-512 machines fitted; the AVX2 machines' `0073403d...` could not be
  reproduced here under any of MKL's, oneDNN's or ATen's instruction-set settings);
- `tfidf_rt.skops` (the fitted pipeline, skops deflated: no pickle): `small.train_tfidf_rt` on one BLAS
  thread, with OpenBLAS's Haswell (AVX2) kernels, which gives the digest `62399bae...` that every
  earlier release fitted and its certificates record.

Run: `OPENBLAS_CORETYPE=Haswell ROBUSTCOUNT_CACHE=$(mktemp -d) .venv/bin/python experiments/ship_small_models.py`
(the environment must be set before Python starts: OpenBLAS reads it when it loads).
"""

from __future__ import annotations

import gzip
import os
import zipfile

import skops.io as sio
import torch
from safetensors.torch import save_file
from threadpoolctl import threadpool_limits

from robustcount.models.engine import QueryEngine
from robustcount.models.families.small_models import BOW_VOCABULARY, BOW_WEIGHTS, TFIDF_PIPELINE
from robustcount.models.small import train_bow_rt, train_tfidf_rt

TFIDF_DIGEST = "62399baeeeae8cbcaf9d3994693b701c5c44d9dca4acad0fb3551a1616358532"


def main() -> None:
    if os.environ.get("OPENBLAS_CORETYPE") != "Haswell":
        raise SystemExit("set OPENBLAS_CORETYPE=Haswell before Python starts (see the docstring)")
    with threadpool_limits(limits=1):
        tfidf = train_tfidf_rt()
    digest = QueryEngine(tfidf).digest()
    if digest != TFIDF_DIGEST:
        raise SystemExit(f"tfidf-rt fitted to {digest}, not the shipped {TFIDF_DIGEST}")
    TFIDF_PIPELINE.write_bytes(sio.dumps(tfidf.estimator, compression=zipfile.ZIP_DEFLATED, compresslevel=9))
    bow = train_bow_rt()
    save_file({k: v.contiguous() for k, v in bow.module.state_dict().items()}, BOW_WEIGHTS)
    words = sorted(bow.tokenizer.ids, key=bow.tokenizer.ids.get)
    with gzip.GzipFile(BOW_VOCABULARY, "wb", mtime=0) as out:
        out.write("".join(f"{w}\n" for w in words).encode("utf-8"))
    print(f"tfidf-rt {digest}; bow-rt {QueryEngine(bow).digest()} ({len(words)} words)")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
