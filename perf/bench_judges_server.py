"""Judge measurements on the demo packs: mapper precision/recall per artifact, throughput, and the
cost of rescoring a board from the database judge cache (docs/judges.md reports the output).

Run from the repository root (CPU only; about a minute with the MiniLM judge):

    .venv/bin/python -m perf.bench_judges_server [--items 1200] [--subs 10]
        [--judges rules local-minilm]

Protocol for the mapper figures (honest about what they measure): truth = the annotated artifact
sets of the TriDF demo pack's OEQ items (test split, large scale, seed 0; the demo generator
draws them per modality). Responses are *written by this script* from that truth: every true
artifact is named with one of two paraphrases below (worded by us from the taxonomy definitions,
not copied from the rules lexicon or the MiniLM prototypes), and one or two *other* candidate
artifacts of the modality are explicitly denied ("there is no banding"). So the figures measure
how well a mapper recognizes plain paraphrases and respects negation; they are not a measure of
agreement with the papers' GPT judge on real model answers.

Rescoring cost: N submissions of free-text OEQ answers on the same pack (each with its own
wording) are scored with `CachingJudge(judge, ShortSessionCache(db))` on a fresh SQLite database
(cold: every response goes to the judge), then again (warm: all from the cache), and without a
judge (the floor: validation, metrics and bootstrap only).
"""
from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import orjson

from perf.bench_judges import evaluate_mapper
from leaderboard.core.taxonomy import ARTIFACT_KEYS, ARTIFACTS_BY_KEY, artifacts_for
from leaderboard.judges import get_judge
from leaderboard.judges.caching import CachingJudge

PARAPHRASES: dict[str, tuple[str, str]] = {
    "blurriness": ("fine detail is lost and parts of the picture look out of focus",
                   "the subject is soft and smeared, lacking sharpness"),
    "blockiness": ("square compression blocks are visible in flat regions",
                   "there are rectangular blocky patches across the frame"),
    "noise": ("a grainy, sandy speckle covers the image",
              "random speckles of noise are scattered over the surface"),
    "banding": ("the sky gradient breaks into distinct colour bands",
                "smooth gradients show abrupt stepped bands"),
    "color_inconsistency": ("the colours are oversaturated and unnaturally vivid",
                            "the hues look garish and unnatural"),
    "blending_artifacts": ("there is a visible boundary where the face meets the background",
                           "the pasted region has a seam that is poorly blended"),
    "lighting_inconsistency": ("the illumination on the person disagrees with the rest of "
                               "the scene",
                               "the light sources are inconsistent across the scene"),
    "unnatural_texture": ("the skin is overly smooth and waxy",
                          "surfaces look plastic, missing natural irregularities"),
    "temporal_artifacts": ("motion is not continuous and details change from frame to frame",
                           "objects morph between consecutive frames"),
    "flicker": ("the overall brightness flickers rapidly",
                "there is a noticeable flickering of brightness over time"),
    "clipping": ("loud passages sound harsh and crackling, as if clipped",
                 "the peaks are distorted by clipping"),
    "hiss": ("a high-pitched static hiss runs under the voice",
             "there is a constant shhh hiss in the background"),
    "buzz": ("a low electrical buzz can be heard",
             "an interfering low-frequency hum is present"),
    "pops": ("short sharp pops interrupt the speech",
             "abrupt clicks and pops break the audio"),
    "reflection_inconsistency": ("the reflection in the window does not match the subject",
                                 "the mirror image is wrong for the scene"),
    "shadow_inconsistency": ("the shadows fall in a direction that contradicts the light",
                             "the person's shadow does not match the scene geometry"),
    "spatial_incoherence": ("the feet do not touch the floor and the cup floats",
                            "objects fail to make contact with the table"),
    "unrealistic_background": ("the background lacks plausible depth and detail",
                               "the backdrop is flat and implausible"),
    "anatomical_inconsistency": ("the hand has six fingers and the arm is distorted",
                                 "the limbs are anatomically implausible"),
    "unnatural_expressions": ("the smile does not fit the emotion of the scene",
                              "facial expressions look stiff and out of context"),
    "unnatural_gaze": ("the eyes stare without blinking in a robotic way",
                       "the gaze direction is fixed and unnatural"),
    "unnatural_movement": ("head movements are jerky and physically implausible",
                           "the body moves in a robotic, unnatural way"),
    "object_integrity_flaws": ("the glasses are broken and incomplete",
                               "the chair is internally inconsistent, with a missing leg"),
    "unrecognizable_text": ("the sign's letters are garbled and unreadable",
                            "text on the label is distorted and illegible"),
    "unnatural_prosody": ("the voice is monotonous and flat",
                          "the speech has robotic intonation"),
    "audio_visual_desync": ("the lips do not line up with the speech",
                            "the mouth movements are out of sync with the audio"),
    "emotional_contradiction": ("the cheerful voice contradicts the sad words",
                                "the emotion in the voice clashes with the face"),
}
DENIALS = ("there is no {name}", "I do not notice any {name}", "no {name} is visible")


def write_response(truth, modality: str, rng: random.Random) -> str:
    """A free-text answer naming every artifact in `truth` and denying 1-2 others."""
    parts = [rng.choice(PARAPHRASES[k]) for k in sorted(truth)]
    others = [k for k in artifacts_for(modality) if k not in truth]
    for k in rng.sample(others, min(len(others), rng.randint(1, 2))):
        parts.append(rng.choice(DENIALS).format(name=ARTIFACTS_BY_KEY[k].name.lower()))
    rng.shuffle(parts)
    head = "This looks manipulated. " if truth else "This looks authentic. "
    return head + " ".join(p[0].upper() + p[1:] + "." for p in parts)


def oeq_truth(pack, split: str, limit: int | None = None):
    """[(item id, task, modality, truth artifact set)] of the OEQ items of `split`."""
    items, labels = pack.items(split), pack.labels(split)
    task, modality = items.decoded("task"), items.decoded("modality")
    tags = labels.decoded("artifacts")  # n x 27 booleans in taxonomy order
    out = []
    for i, rid in enumerate(items.ids.tolist()):
        if task[i] in ("oeq_a", "oeq_b"):
            truth = frozenset(k for k, hit in zip(ARTIFACT_KEYS, tags[i].tolist()) if hit)
            out.append((rid, str(task[i]), str(modality[i]), truth))
    return out[:limit] if limit else out


def mapper_quality(judge, rows, *, seed: int = 0) -> dict:
    rng = random.Random(seed)
    by_modality: dict[str, list] = {}
    for _, _, m, truth in rows:
        by_modality.setdefault(m, []).append((write_response(truth, m, rng), truth))
    return {m: evaluate_mapper(judge, ex, candidates=list(artifacts_for(m)))
            for m, ex in sorted(by_modality.items())}


def submission_file(pack, split: str, rows, path: Path, seed: int) -> None:
    """Every item of `split`: OEQ items answer in free text, the rest abstain-free defaults."""
    from leaderboard.core.baselines import baseline_rows
    rng = random.Random(seed)
    text = {rid: write_response(truth, m, rng) for rid, _, m, truth in rows}
    with open(path, "wb") as fh:
        for row in baseline_rows(pack, split, "random", seed=seed):
            if row["id"] in text:
                row.pop("artifacts", None)
                row["response"] = text[row["id"]]
            fh.write(orjson.dumps(row) + b"\n")


def rescore_cost(judge, pack, split: str, n_subs: int, workdir: Path) -> dict:
    from leaderboard.core.scoring import score_predictions
    from leaderboard.server.db import Database
    from leaderboard.server.models import Base
    from leaderboard.server.services.judge_cache import ShortSessionCache

    rows = oeq_truth(pack, split)
    files = []
    for s in range(n_subs):
        files.append(workdir / f"sub{s}.jsonl")
        submission_file(pack, split, rows, files[-1], seed=100 + s)
    db = Database(f"sqlite:///{workdir / f'cache-{judge.name}.db'}")
    Base.metadata.create_all(db.engine)
    out = {"subs": n_subs, "responses_per_sub": len(rows)}
    score_predictions(pack, split, files[0], n_resamples=200)  # warm-up: imports, pack caches
    for phase in ("no_judge", "cold", "warm"):
        judged = 0
        started = time.perf_counter()
        for path in files:
            if phase == "no_judge":
                score_predictions(pack, split, path, n_resamples=200)
                continue
            caching = CachingJudge(judge, ShortSessionCache(db), batch_size=64)
            score_predictions(pack, split, path, judge=caching, n_resamples=200)
            judged += caching.judged
        out[phase] = {"seconds": time.perf_counter() - started, "judged": judged}
    db.dispose()
    return out


def main(argv: list[str] | None = None) -> None:
    from leaderboard.core.packs import load_pack
    from leaderboard.demo import generate

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=1200, help="OEQ items for mapper quality")
    ap.add_argument("--subs", type=int, default=10, help="submissions for the rescore cost")
    ap.add_argument("--judges", nargs="+", default=["rules", "local-minilm"])
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        big = load_pack(generate("tridf", tmp / "large", scale="large", seed=0))
        small = load_pack(generate("tridf", tmp / "small", scale="small", seed=0))
        rows = oeq_truth(big, "test", args.items)
        for name in args.judges:
            judge = get_judge(name)
            texts = [write_response(t, m, random.Random(i)) for i, (_, _, m, t) in
                     enumerate(rows)]
            judge.map_artifacts(texts[:2])  # load any model before timing
            started = time.perf_counter()
            for m in sorted({m for _, _, m, _ in rows}):
                judge.map_artifacts([t for t, r in zip(texts, rows) if r[2] == m],
                                    candidates=list(artifacts_for(m)))
            rate = len(texts) / (time.perf_counter() - started)
            print(f"## {judge.identity}: {rate:,.0f} responses/s mapping on CPU "
                  f"({len(texts)} responses)")
            for m, rep in mapper_quality(judge, rows).items():
                mi = rep["micro"]
                print(f"### {m} (n={rep['n']}): micro P={mi['precision']:.3f} "
                      f"R={mi['recall']:.3f} F1={mi['f1']:.3f}")
                print("| artifact | support | precision | recall |")
                print("|---|---:|---:|---:|")
                for key, v in rep["per_artifact"].items():
                    p = "n/a" if v["precision"] is None else f"{v['precision']:.2f}"
                    r = "n/a" if v["recall"] is None else f"{v['recall']:.2f}"
                    print(f"| {key} | {v['support']} | {p} | {r} |")
            work = tmp / f"rescore-{name}"
            work.mkdir()
            cost = rescore_cost(judge, small, "test", args.subs, work)
            print(f"### rescore {cost['subs']} submissions x {cost['responses_per_sub']} "
                  f"free-text answers (TriDF small, test split)")
            for phase in ("no_judge", "cold", "warm"):
                c = cost[phase]
                print(f"- {phase}: {c['seconds']:.2f} s, {c['judged']} responses sent "
                      "to the judge")


if __name__ == "__main__":
    main()
