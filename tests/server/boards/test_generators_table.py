"""The ``generators:`` table of benchmark.yaml, per-item generators in outcomes, and the seen /
unseen numbers of one outcome computed by hand (issue 37)."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from leaderboard.core.errors import PackError
from leaderboard.core.outcomes import Outcome
from leaderboard.core.packs import parse_meta
from leaderboard.server.boards.generators import MIN_ITEMS, ordered_generators, row_numbers

HEAD = ("key: toy\ntitle: T\nmodalities: [image, text]\nsplits: [test]\n"
        "tasks:\n- {key: d, kind: detection, modalities: [image], headline: accuracy}\n")


def test_packs_without_generators_still_load():
    assert parse_meta(HEAD).generators == ()


def test_generators_parsed_with_dates():
    meta = parse_meta(HEAD + "generators:\n"
                      "- {key: SDXL, name: Stable Diffusion XL, modality: image,"
                      " date: 2023-07-26}\n"
                      "- {key: gpt, modality: text, date: '2023-03-14'}\n")
    a, b = meta.generators
    assert a.as_dict() == {"key": "SDXL", "name": "Stable Diffusion XL", "modality": "image",
                           "date": "2023-07-26"}
    assert b.name == "gpt" and b.date == dt.date(2023, 3, 14)
    assert "generators" not in meta.extras


@pytest.mark.parametrize("table, field, words", [
    ("generators: SDXL\n", "generators", "list"),
    ("generators:\n- SDXL\n", "generators[0]", "mapping"),
    ("generators:\n- {name: x, modality: image, date: 2023-01-01}\n", "generators[0].key",
     "required"),
    ("generators:\n- {key: a, modality: image, date: 2023-01-01}\n"
     "- {key: b, modality: image, date: 2023-01-01}\n"
     "- {key: c, modality: image, date: 2023-02-30}\n", "generators[2].date", "ISO date"),
    ("generators:\n- {key: a, modality: image, date: 2023-01-01 10:00:00}\n",
     "generators[0].date", "ISO date"),
    ("generators:\n- {key: a, modality: image}\n", "generators[0].date", "required"),
    ("generators:\n- {key: a, modality: audio, date: 2023-01-01}\n", "generators[0].modality",
     "pack's modalities"),
    ("generators:\n- {key: a, modality: image, date: 2023-01-01}\n"
     "- {key: a, modality: image, date: 2023-01-02}\n", "generators[1].key", "duplicate"),
    ("generators:\n- {key: a, modality: image, date: 2023-01-01, when: x}\n", "generators[0]",
     "unknown fields"),
])
def test_generator_errors_name_the_field(table, field, words):
    with pytest.raises(PackError) as exc:
        parse_meta(HEAD + table)
    hits = [p for p in exc.value.problems.items if p.field == field]
    assert hits and words in hits[0].message, exc.value.problems.items


def test_outcome_generator_round_trip():
    o = Outcome("d", "accuracy", "mean", [1, 0, 1, 1], [0, 1, 1, 0], [0, 0, 0, 0], ("image",),
                generator=[-1, 0, 1, -1], generators=("A", "B"))
    back = Outcome.from_arrays(o.to_arrays("p/d/"), "p/d/")
    assert back.generators == ("A", "B") and back.generator.tolist() == [-1, 0, 1, -1]
    assert back.fingerprint() == Outcome("d", "accuracy", "mean", [1, 0, 1, 1], [0, 1, 1, 0],
                                         [0, 0, 0, 0], ("image",)).fingerprint()
    assert o.generator_rows(["B"]).tolist() == [True, False, True, True]
    assert o.generator_rows(["nope"]) is None
    assert o.subset(np.array([True, False, True, False])).generator.tolist() == [-1, 1]


def test_seen_unseen_and_cells_by_hand():
    # 40 reals (30 right), generator "old" 20 fakes (18 right), "new" 20 fakes (5 right),
    # "tiny" 0 fakes here but dated (no column), "undated" 10 fakes (all right, no date)
    x = [1] * 30 + [0] * 10 + [1] * 18 + [0] * 2 + [1] * 5 + [0] * 15 + [1] * 10
    gen = [-1] * 40 + [0] * 20 + [1] * 20 + [2] * 10
    strata = [0] * 40 + [1] * 50
    o = Outcome("d", "accuracy", "mean", x, strata, [0] * 90, ("image",), generator=gen,
                generators=("old", "new", "undated"))
    info = {"generators": [
        {"key": "new", "name": "New", "modality": "image", "date": "2024-06-01"},
        {"key": "old", "name": "Old", "modality": "image", "date": "2022-01-01"}]}
    gens = ordered_generators(info, {"old", "new", "undated"})
    assert [g["key"] for g in gens] == ["old", "new", "undated"]
    nums = row_numbers(o, gens, dt.date(2023, 1, 1), n_resamples=200)
    seen, unseen, gap = nums["seen"], nums["unseen"], nums["gap"]
    assert seen["n"] == 60 and seen["value"] == pytest.approx((30 + 18) / 60)
    assert unseen["n"] == 60 and unseen["value"] == pytest.approx((30 + 5) / 60)
    assert gap["value"] == pytest.approx(48 / 60 - 35 / 60)
    assert seen["ci_low"] < seen["value"] < seen["ci_high"]
    assert gap["ci_low"] < gap["value"] < gap["ci_high"]
    assert nums["seen_generators"] == ["old"] and nums["unseen_generators"] == ["new"]
    cells = {c["generator"]: c for c in nums["cells"]}
    assert cells["old"]["value"] == pytest.approx(48 / 60) and not cells["old"]["unseen"]
    assert cells["new"]["unseen"] and cells["new"]["n"] == 60
    assert cells["undated"]["value"] == pytest.approx(40 / 50) and not cells["undated"]["unseen"]
    # a submission made on the day "new" became public has seen it
    same_day = row_numbers(o, gens, dt.date(2024, 6, 1), n_resamples=50)
    assert same_day["unseen"] is None and same_day["gap"] is None


def test_fewer_items_than_the_minimum_show_no_value():
    n_real = MIN_ITEMS - 5
    x = [1] * n_real + [1] * 4
    o = Outcome("d", "accuracy", "mean", x, [0] * n_real + [1] * 4, [0] * len(x), ("image",),
                generator=[-1] * n_real + [0] * 4, generators=("g",))
    gens = [{"key": "g", "name": "g", "modality": "image", "date": "2020-01-01"}]
    nums = row_numbers(o, gens, dt.date(2025, 1, 1), n_resamples=20)
    assert nums["cells"][0]["value"] is None and nums["cells"][0]["n"] == n_real + 4
    assert nums["seen"]["value"] is None and nums["seen"]["ci_low"] is None


def test_a_generator_slice_takes_the_reals_of_its_own_modality():
    # modality 0 (image): 2 reals, image gen "i" 1 fake; modality 1 (text): 3 reals, gen "t" 2
    o = Outcome("d", "accuracy", "mean", [1, 1, 1, 0, 0, 0, 0, 1], [0] * 8,
                [0, 0, 0, 1, 1, 1, 1, 1], ("image", "text"),
                generator=[-1, -1, 0, -1, -1, -1, 1, 1], generators=("i", "t"))
    assert o.generator_rows(["i"]).tolist() == [True, True, True] + [False] * 5
    assert o.generator_rows(["t"]).tolist() == [False] * 3 + [True] * 5
    assert o.generator_rows(["i", "t"]).all()


@pytest.mark.parametrize("model", ["mean", "cells"])
def test_the_fast_bootstrap_agrees_with_weighting_every_item(model):
    from leaderboard.server.boards.generators import _linear_draws, _weighted_draws

    rng = np.random.default_rng(3)
    n, n_gen = 600, 3
    gen = rng.integers(-1, n_gen, n)
    sub = rng.integers(0, 2, n)
    strata = (sub * (n_gen + 1) + np.where(gen < 0, n_gen, gen) if model == "cells"
              else (gen >= 0).astype(int))
    o = Outcome("d", "m", model, rng.integers(0, 2, n), strata, np.zeros(n), ("image",),
                {"n_gen": n_gen}, generator=gen, generators=("a", "b", "c"))
    groups = {"a": o.generator_rows(["a"]), "bc": o.generator_rows(["b", "c"])}
    fp, fd = _linear_draws(o, groups, 2000, np.random.default_rng(0))
    sp, sd = _weighted_draws(o, groups, 2000, np.random.default_rng(0))
    for g in groups:
        assert fp[g] == pytest.approx(sp[g])
        assert np.std(fd[g]) == pytest.approx(np.std(sd[g]), rel=0.15)
