"""Issue 29, "one data-source registry": each source is registered once in `prosfi.data.sources`, and `prosfi data`,
`--data` specs and recipe `dataset:` names all come from it; old spellings are aliases of one canonical name; an
unknown name is refused in one line that lists the known ones; docs/data.md's table is the registry's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prosfi.cli import main
from prosfi.data import sources
from prosfi.data.sources import DataSource, Loaded, SpecError
from prosfi.eval.sources import load_source
from prosfi.train.problems import generate_problems

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


# ------------------------------------------------------------------ a toy source, registered by the test alone

@dataclass(frozen=True)
class ChainSettings:
    count: int = field(default=4, metadata={"help": "chains to draw"})
    seed: int = field(default=0, metadata={"help": "random seed"})
    shuffled: bool = field(default=False, metadata={"help": "shuffle the premises"})


def _chains(count: int, seed: int, layout: str = "fixed", depth: int = 1) -> list:
    from prosfi.data.toy import ToyConfig, generate

    problems = generate(ToyConfig(min_depth=depth, max_depth=depth, layout=layout), count, seed, split="train")
    for p in problems:  # the source composes its own ids: family, depth, seed, index
        p.id = f"chains-{depth}-s{seed}-{p.id.rsplit('-', 1)[1]}"
        p.source = "chains"
    return problems


def _write(s: ChainSettings) -> Loaded:
    return Loaded(what="chain problems").add(None, _chains(s.count, s.seed, "shuffled" if s.shuffled else "fixed"))


def _spec(a) -> Loaded:
    out = Loaded()
    for depth in sources.people(a.arg or "1", "chains", 1, 3):
        out.add(depth, _chains(a.count, a.seed, depth=depth))
    return out


CHAINS = DataSource("chains", "toy chains of a test's own", ("true_false_uncertain",), ("rule_chains",),
                    settings=ChainSettings, write=_write, spec="chains:1..3", read_spec=_spec,
                    train=lambda d: _chains(d.count, d.seed, d.layout), difficulty_help="not read")


@pytest.fixture()
def chains(monkeypatch):
    """CHAINS registered for one test; the registry is restored after it."""
    monkeypatch.setattr(sources, "SOURCES", dict(sources.SOURCES))
    monkeypatch.setattr(sources, "ALIASES", dict(sources.ALIASES))
    return sources.register(CHAINS)


def test_a_registered_source_is_a_data_command(chains, tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    assert main(["data", "chains", "--count", "3", "--seed", "5", "--shuffled", "-o", str(out)]) == 0
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids == ["chains-1-s5-0000", "chains-1-s5-0001", "chains-1-s5-0002"]
    assert "wrote 3 chain problems" in capsys.readouterr().err
    alias = tmp_path / "alias.jsonl"  # the alias is the same command
    assert main(["data", "rule_chains", "--count", "3", "--seed", "5", "--shuffled", "-o", str(alias)]) == 0
    assert alias.read_bytes() == out.read_bytes()


def test_a_registered_source_is_an_eval_spec(chains):
    src = load_source("chains:1..2", count=2, seed=3)
    assert src.name == "chains" and [p.id for p in src.problems] == [
        "chains-1-s3-0000", "chains-1-s3-0001", "chains-2-s3-0000", "chains-2-s3-0001"]
    assert [src.group(p) for p in src.problems][::2] == [("chains", "1"), ("chains", "2")]
    assert [p.id for p in load_source("rule_chains:1", count=2, seed=3).problems] == [p.id for p in src.problems[:2]]


def test_a_source_registered_after_import_is_listed_in_evals_help(chains, capsys):
    """`prosfi eval --help` lists the specs registered when it runs, not those registered when eval was imported."""
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    assert "chains:1..3" in " ".join(capsys.readouterr().out.split())


def test_a_registered_source_is_a_recipe_dataset(chains):
    from prosfi.train.config import ProsfiScriptArguments, validate

    validate(ProsfiScriptArguments(dataset="rule_chains"))
    problems = generate_problems("chains", 3, seed=2)
    assert [p.id for p in problems] == ["chains-1-s2-0000", "chains-1-s2-0001", "chains-1-s2-0002"]


def test_a_name_or_alias_is_registered_once():
    with pytest.raises(ValueError, match="'proverqa_gen' is taken by 'fol'"):
        sources.register(DataSource("proverqa_gen", "a second generator"))
    with pytest.raises(ValueError, match="needs its settings dataclass"):
        sources.register(DataSource("nosettings", "writes without flags", write=_write))
    assert "nosettings" not in sources.SOURCES


# ------------------------------------------------------------------ aliases: the old spellings keep working

def test_every_alias_resolves_to_its_canonical_source():
    assert sources.ALIASES == {"proverqa_gen": "fol", "proverqa_hub": "proverqa", "kk_hub": "kkhub"}
    for alias, name in sources.ALIASES.items():
        assert sources.get(alias) is sources.SOURCES[name]
        assert alias not in sources.SOURCES


def test_an_alias_loads_exactly_what_its_canonical_name_loads(tmp_path):
    pqa = FIXTURES / "proverqa_dev.json"
    kk = FIXTURES / "kk_records.jsonl"
    for alias, name in (("proverqa_gen:easy,hard", "fol:easy,hard"), (f"proverqa_hub:hard={pqa}", f"proverqa:hard={pqa}"),
                        (f"kk_hub:{kk}", f"kkhub:{kk}")):
        a, b = load_source(alias, count=3, seed=0), load_source(name, count=3, seed=0)
        assert [p.to_dict() for p in a.problems] == [p.to_dict() for p in b.problems] and a.problems, alias
        assert a.name == b.name
    recipe = generate_problems("proverqa_gen", 4, seed=1, difficulty="easy")  # the recipes' spelling
    assert [p.id for p in recipe] == [p.id for p in generate_problems("fol", 4, seed=1, difficulty="easy")]
    assert [p.id for p in generate_problems("proverqa_hub", 2, difficulty="hard", path=str(pqa))] == \
        [p.id for p in generate_problems("proverqa", 2, difficulty="hard", path=str(pqa))]


def test_the_data_command_answers_to_an_alias(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["data", "proverqa_gen", "--count", "3", "--no-verify", "-o", str(a)]) == 0
    assert main(["data", "fol", "--count", "3", "--no-verify", "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes() and a.read_text().count("\n") == 3


def test_every_recipe_names_a_registered_dataset():
    import yaml

    recipes = sorted((ROOT / "recipes").rglob("*.yaml"))
    named = {yaml.safe_load(p.read_text()).get("dataset") for p in recipes} - {None}
    assert {"kk", "proverqa_gen", "toy", "physics", "gsm8k"} <= named
    for name in named:
        assert "train" in sources.get(name).uses, name


# ------------------------------------------------------------------ unknown names: one line, the known ones listed

def test_a_bare_source_name_is_that_source_with_no_argument(tmp_path, monkeypatch):
    assert [p.id for p in load_source("physics", count=1, seed=0).problems] == [
        "physics-easy-s0-0000", "physics-medium-s0-0000", "physics-hard-s0-0000"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "physics").write_text("")  # a file of that name is the file
    with pytest.raises(SpecError, match="the file has no problems"):
        load_source("physics")


def test_an_unknown_eval_spec_lists_the_known_sources():
    with pytest.raises(SpecError) as info:
        load_source("nope:1")
    message = str(info.value)
    assert "\n" not in message and message.startswith("--data 'nope:1': unknown source 'nope'; known: jsonl, kk")
    assert "fol (also proverqa_gen)" in message and "scibench" in message


def test_an_unknown_recipe_dataset_lists_the_trainable_ones():
    from prosfi.train.config import ProsfiScriptArguments, validate

    with pytest.raises(ValueError) as info:
        validate(ProsfiScriptArguments(dataset="gsm8x"))
    message = str(info.value)
    assert message.startswith("dataset: unknown name 'gsm8x'; known: ") and "\n" not in message
    assert "proverqa (also proverqa_hub)" in message and "rgkk" not in message  # eval-only sources are not offered
    with pytest.raises(ValueError, match="'rgkk' is not for recipes .*`--data` specs"):
        generate_problems("rgkk", 3)


def test_an_unknown_data_command_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["data", "nope", "-o", "x.jsonl"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and "{kk,fol,proverqa,toy,gsm8k," in err and "'proverqa_gen'" in err


def test_data_usage_errors_are_one_line_exit_2(tmp_path, capsys):
    assert main(["data", "toy", "--depth", "one", "-o", str(tmp_path / "t.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == "prosfi data: --depth: a number or a range such as 1-3, got 'one'"
    assert main(["data", "kk", "-o", str(tmp_path / "no" / "k.jsonl")]) == 2
    assert "cannot write" in capsys.readouterr().err and not (tmp_path / "no").exists()


# ------------------------------------------------------------------ what derives from the registry

def test_data_subcommands_and_flags_come_from_the_registry():
    import argparse

    from prosfi.data.cli import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert [n for n in sub.choices if n in sources.SOURCES] == list(sources.names("data"))
    fol = sub.choices["fol"].parse_args(["-o", "x"])
    assert (fol.difficulty, fol.count, fol.seed, fol.verify, fol.backends) == ("hard", 100, 0, True, "z3")
    assert sub.choices["fol"].parse_args(["--no-verify", "-o", "x"]).verify is False


def test_the_documented_sources_table_is_the_registry():
    text = (ROOT / "docs" / "data.md").read_text()
    marker = "<!-- sources table: prosfi.data.sources.sources_table() -->\n"
    assert marker in text
    documented = text.split(marker, 1)[1].split("\n\n", 1)[0].strip()
    assert documented == sources.sources_table()


def test_every_kind_is_read_by_the_domain_it_names():
    from prosfi.data.problem import KINDS
    from prosfi.domains import domain_for

    for kind, name in KINDS.items():
        domain = domain_for(kind)
        assert domain.name == name and kind in domain.kinds
    for s in sources.SOURCES.values():  # every source yields known kinds
        assert set(s.kinds) <= set(KINDS), s.name


def test_what_an_eval_group_counts_comes_from_its_source():
    assert [sources.level_name(c) for c in ("kk", "kk_hub", "rgkk", "fol", "physics", "my_file")] == [
        "people", "people", "people", "difficulty", "difficulty", "difficulty"]


def test_every_documented_source_name_is_registered():
    """`prosfi data NAME` and `dataset: NAME` in the README, the docs and the recipes name registered sources
    (serving.md once named a `prosfi data export` that never existed)."""
    import re

    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "recipes").rglob("*.yaml")]
    texts = [p.read_text() for p in files]
    commands = {m for t in texts for m in re.findall(r"prosfi data ([a-z0-9_]+)", t)}
    pattern = re.compile(r"^\s*dataset: ([a-z0-9_]+)|`dataset: ([a-z0-9_]+)`", re.MULTILINE)
    datasets = {a or b for t in texts for a, b in pattern.findall(t)}
    assert {"kk", "fol", "gold", "gsm8k"} <= commands and {"proverqa_gen", "toy", "gsm8k"} <= datasets
    assert commands - {"gold", "prompts", "validate"} <= set(sources.names("data")) | set(sources.ALIASES)
    assert all("train" in sources.get(name).uses for name in datasets)


def test_the_dry_runs_hub_check_asks_the_source(tmp_path, monkeypatch):
    """Offline, a hub source's file must be in the local cache (`DataSource.hub_cache`); preflight names no
    source itself."""
    import dataclasses
    from types import SimpleNamespace

    from prosfi.data import sources
    from prosfi.train.preflight import check_hub_data
    from prosfi.train.recipe import RecipeError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    script = SimpleNamespace(dataset="proverqa_hub", dataset_path=None, dataset_difficulty="hard")
    with pytest.raises(RecipeError, match="not in the local hub cache"):
        check_hub_data(script)
    asked = []
    cached = dataclasses.replace(sources.SOURCES["proverqa"],
                                 hub_cache=lambda difficulty: asked.append(difficulty) or "(its file) is cached")
    monkeypatch.setitem(sources.SOURCES, "proverqa", cached)
    assert check_hub_data(script) == "data: proverqa_hub (its file) is cached" and asked == ["hard"]
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert "loaded from the hub by the run" in check_hub_data(script)
