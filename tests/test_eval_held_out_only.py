"""Issue 27, "a way to evaluate the quantity demo model on fresh problems": `prosfi eval --recipe R
--held-out-only` scores only problems the recipe never trains on (GRPO or its SFT warm-up), once each."""

from __future__ import annotations

import pytest
import yaml

from prosfi.eval.sources import content_key, load_source

pytest.importorskip("trl")


def test_held_out_only_leaves_out_what_the_recipe_trains_on(tmp_path):
    from prosfi.eval.cli import keep_held_out, trained_problems

    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"dataset": "kk", "dataset_difficulty": "2", "dataset_size": 30,
                                      "dataset_seed": 0, "sft": True, "sft_size": 20}))
    training = trained_problems(str(recipe))
    assert len(training) == 50  # GRPO's 30 and the warm-up's 20
    source = load_source("kk:2", count=40, seed=2000)  # the training draw's seed (prosfi.train.problems)
    notes = keep_held_out(source, training)
    trained = {content_key(p) for p in training}
    kept = [content_key(p) for p in source.problems]
    assert source.problems and len(kept) <= 10 and len(set(kept)) == len(kept) and not set(kept) & trained
    assert notes[0].startswith(f"--held-out-only: {len(kept)} problems never trained on")
