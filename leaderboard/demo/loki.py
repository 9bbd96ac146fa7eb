"""Demo pack for LOKI (Ye et al., ICLR 2025): the real benchmark's shape, procedural content.

Samples come in same-domain pairs (one AI-generated, one real; LOKI 3.2 "real paired data") for
each modality and subcategory. Every sample is asked both ways in ``judgment`` (LOKI 3.3, C.2);
every pair is asked both ways in ``multiple_choice``; video and image fakes get an
``abnormal_selection`` question; video, image and 3D fakes get an ``explanation`` question with a
reference annotation in the shape of LOKI figure 3. Answers are balanced (yes/no, letter
positions), so a random baseline scores about 50% (25% on four-option selection).

``small``: 52 pairs (362 questions) with real media files. ``large``: 2,770 pairs (about 18,900
questions, LOKI's "over 18K"), no media. The paper does not publish per-task counts; the split
between modalities follows its sample counts (video 593 clips, image 2,200+, 3D 1,200+, text 3,359)
scaled to the total.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from leaderboard.core.benchmarks.loki import Loki
from leaderboard.core.generator_dates import generator_table
from leaderboard.demo import media
from leaderboard.demo.writer import PackWriter, assign_part, assign_split

SUBCATEGORIES = {
    "video": ("sora", "keling", "open_sora", "lumiere", "runway"),
    "image": ("animals", "satellite", "medicine", "object", "doc", "scenery", "person"),
    "3d": ("clay", "dreamfusion", "magic3d", "dreamgaussian", "wonder3d", "gaussiandreamer"),
    "text": ("wikipedia", "arxiv", "news", "philosophy", "ancient_chinese", "fiction", "poetry",
             "reviews"),
    "audio": ("speech", "singing", "music", "environment"),
}
GENERATORS = {
    "image": ("flux", "midjourney", "sd-1.5", "sd-2.1", "stylegan", "ddim", "adm"),
    "text": ("gpt-4o", "qwen-max", "llama-3.1-405b", "mistral-large", "claude-3.5-sonnet"),
    "speech": ("tacotron2", "vits", "hifi-gan", "wavenet"),
    "singing": ("diffsinger", "acesinger", "so-vits-svc"),
    "music": ("musicgen", "audioldm2", "suno"),
    "environment": ("audioldm", "vq-vae"),
}
PAIRS = {"small": {"video": 8, "image": 14, "3d": 6, "text": 16, "audio": 8},
         "large": {"video": 200, "image": 750, "3d": 400, "text": 1000, "audio": 420}}
NOUN = {"video": "video", "image": "image", "3d": "3D object", "text": "text", "audio": "audio"}
# Table 4: easy 2,470, medium 1,104, hard 3,938 of 7,512 questions.
DIFFICULTY_P = {"easy": 2470 / 7512, "medium": 1104 / 7512, "hard": 3938 / 7512}
ELEMENTS = {
    "image": ("the shape of the hands", "the text on the sign", "the shadows under the objects",
              "the reflection in the window", "the texture of the fur", "the symmetry of the ears",
              "the edges of the road", "the pattern of the tiles", "the number of fingers",
              "the outline of the buildings"),
    "video": ("the number of objects over time", "the shape of the chair", "the motion of the "
              "water", "the direction of the shadows", "the background buildings", "the texture "
              "of the ground", "the gait of the person", "the colour of the sky"),
}
GLOBAL_DESC = {
    "image": ("The overall saturation is unnaturally high.", "Surfaces look overly smooth, like "
              "plastic.", "Lighting and shadows disagree across the scene."),
    "video": ("Objects change shape from frame to frame.", "The brightness flickers between "
              "frames.", "Motion ignores gravity in places."),
}
TEXTURE_DESC = ("The surface texture is blurred and the colours bleed across part borders.",
                "The texture repeats visibly and does not follow the geometry.")
NORMAL_DESC = ("The normals are over-smooth; fine geometric detail is missing.",
               "Separate parts merge into one surface in the normal map.")


def _hid(seed: int, *parts) -> str:
    return hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).hexdigest()[:12]


def _samples(scale: str, seed: int, rng: np.random.Generator) -> list[dict]:
    """Pairs of samples (fake first, real second) with every hidden attribute."""
    pairs = []
    for modality, n in PAIRS[scale].items():
        subs = SUBCATEGORIES[modality]
        for k in range(n):
            sub = subs[k % len(subs)]
            gens = GENERATORS.get(modality) or GENERATORS.get(sub) or (sub,)
            pair = {"modality": modality, "subcategory": sub, "key": _hid(seed, modality, k),
                    "generator": gens[int(rng.integers(len(gens)))], "samples": []}
            if modality == "text":
                pair["language"] = ("en", "zh")[k % 2]
                pair["length"] = ("short", "medium", "long")[(k // 2) % 3]
            for truth in ("fake", "real"):
                s = {"truth": truth, "hid": _hid(seed, modality, k, truth)}
                if modality != "audio":  # the difficulty table covers video, image, 3D, text
                    s["difficulty"] = str(rng.choice(list(DIFFICULTY_P),
                                                     p=list(DIFFICULTY_P.values())))
                pair["samples"].append(s)
            pair["anomalies"] = [str(e) for e in rng.permutation(ELEMENTS.get(modality, ()))[:2]]
            pairs.append(pair)
    return pairs


def _write_media(w: PackWriter, pair: dict, sample: dict) -> list[str]:
    m, hid, fake = pair["modality"], sample["hid"], sample["truth"] == "fake"
    if m == "image":
        rel, path = w.media(f"image/{hid}.png")
        media.image(path, seed=hid, fake=fake)
        return [rel]
    if m == "video":
        rel, path = w.media(f"video/{hid}.avi")
        media.video(path, seed=hid, fake=fake)
        return [rel]
    if m == "audio":
        rel, path = w.media(f"audio/{hid}.wav")
        media.audio(path, seed=hid, kind=pair["subcategory"], fake=fake)
        return [rel]
    if m == "3d":
        rel, folder = w.media(f"3d/{hid}")
        files = media.multiview(folder, seed=hid, fake=fake)
        return [f"{rel}/{p.name}" for p in files]
    rel, path = w.media(f"text/{hid}.txt")
    media.text(path, sample["text"])
    return [rel]


def _reference(pair: dict, rng: np.random.Generator) -> dict:
    m = pair["modality"]
    if m == "3d":
        return {"texture": [{"desc": str(rng.choice(TEXTURE_DESC))}],
                "normal": [{"desc": str(rng.choice(NORMAL_DESC))}]}
    glob = [{"desc": str(rng.choice(GLOBAL_DESC[m]))}]
    if m == "image":
        regional = []
        for e in pair["anomalies"]:
            x, y = (int(v) for v in rng.integers(0, 40, size=2))
            regional.append({"region": [x, y, 16, 16], "desc": f"{e.capitalize()} is implausible."})
        return {"global": glob, "regional": regional}
    segment = [{"start": 0.0, "end": 1.0, "desc": f"{e.capitalize()} changes implausibly."}
               for e in pair["anomalies"]]
    return {"global": glob, "segment": segment}


def _questions(pair: dict, rng: np.random.Generator, with_media: bool, w: PackWriter):
    """(item, label) rows of one pair; media written when ``with_media``."""
    m, noun = pair["modality"], NOUN[pair["modality"]]
    fake, real = pair["samples"]
    common = {"subcategory": pair["subcategory"]}
    extra_item = {k: pair[k] for k in ("language", "length") if k in pair}
    files = {}
    for s in pair["samples"]:
        if m == "text":
            s["text"] = media.passage(rng, language=pair["language"], length=pair["length"],
                                          domain=pair["subcategory"], fake=s["truth"] == "fake")
        files[s["truth"]] = _write_media(w, pair, s) if with_media else None
    for s in pair["samples"]:
        for phrasing in ("ask_fake", "ask_real"):
            q = (f"Is the provided {noun} generated by AI?" if phrasing == "ask_fake"
                 else f"Is the provided {noun} real, i.e. not generated by AI?")
            yes = (s["truth"] == "fake") == (phrasing == "ask_fake")
            label = {**common, "answer": "yes" if yes else "no", "truth": s["truth"]}
            if s["truth"] == "fake":
                label["generator"] = pair["generator"]
            if "difficulty" in s:
                label["difficulty"] = s["difficulty"]
            yield "judgment", {"id": f"loki/j/{s['hid']}/{phrasing}", "modality": m,
                               "question": q, "phrasing": phrasing, **extra_item,
                               "media": files[s["truth"]]}, label
    fake_first = bool(rng.integers(2))
    order = (fake, real) if fake_first else (real, fake)
    letter = {"fake": "A" if fake_first else "B", "real": "B" if fake_first else "A"}
    if m == "text":
        options = {"A": order[0]["text"], "B": order[1]["text"]}
    else:
        options = {"A": f"the first {noun}", "B": f"the second {noun}"}
    pair_media = None if not with_media else files[order[0]["truth"]] + files[order[1]["truth"]]
    for phrasing in ("ask_fake", "ask_real"):
        target = "AI-generated" if phrasing == "ask_fake" else "real"
        label = {**common, "answer": letter["fake" if phrasing == "ask_fake" else "real"],
                 "generator": pair["generator"]}
        if "difficulty" in fake:
            label["difficulty"] = fake["difficulty"]
        yield "multiple_choice", {"id": f"loki/mc/{pair['key']}/{phrasing}", "modality": m,
                                  "question": f"Which of the following {noun}s is {target}?",
                                  "phrasing": phrasing, "options": options, **extra_item,
                                  "media": pair_media}, label
    fake_media = files["fake"]
    if m in ("video", "image"):
        distract = [e for e in ELEMENTS[m] if e not in pair["anomalies"]]
        picks = [pair["anomalies"][0]] + [str(e) for e in rng.permutation(distract)[:3]]
        pos = int(rng.integers(4))
        picks[0], picks[pos] = picks[pos], picks[0]
        yield "abnormal_selection", {
            "id": f"loki/sel/{pair['key']}", "modality": m, "media": fake_media,
            "question": f"In the {noun}, what element can be seen as inconsistent?",
            "options": {c: p for c, p in zip("ABCD", picks)}}, {
            **common, "answer": "ABCD"[pos], "generator": pair["generator"]}
    if m in ("video", "image", "3d"):
        yield "explanation", {"id": f"loki/exp/{pair['key']}", "modality": m,
                              "media": fake_media,
                              "question": f"Why is the provided {noun} AI-generated?"}, {
            **common, "generator": pair["generator"], "reference": _reference(pair, rng)}


def meta() -> dict:
    """The pack's meta.json (a fresh dict)."""
    all_m = ["video", "image", "3d", "text", "audio"]
    return {
        "key": "loki", "title": "LOKI", "version": "1", "modalities": all_m,
        "tasks": [
            {"key": "judgment", "kind": "yesno", "title": "Judgment", "modalities": all_m,
             "headline": "accuracy", "secondary": ["balanced_accuracy"],
             "description": "Is it AI-generated? / Is it real? Every sample is asked both ways."},
            {"key": "multiple_choice", "kind": "choice", "title": "Multiple choice",
             "modalities": all_m, "headline": "accuracy", "secondary": ["balanced_accuracy"],
             "description": "Pick the AI-generated (or the real) one of a same-domain pair."},
            {"key": "abnormal_selection", "kind": "choice", "title": "Abnormal detail selection",
             "modalities": ["video", "image"], "headline": "accuracy", "secondary": [],
             "description": "Pick the inconsistent detail of an AI-generated sample."},
            {"key": "explanation", "kind": "explanation", "title": "Abnormal explanation",
             "modalities": ["video", "image", "3d"], "headline": "explanation_score",
             "secondary": [], "description": "Explain why the sample is AI-generated; a judge "
             "rates the answer against the human annotation."},
        ],
        "splits": ["dev", "test"],
        # the generators with a known public day (issue 37); the others show undated
        "generators": (generator_table(GENERATORS["image"], modality="image")
                       + generator_table(GENERATORS["text"], modality="text")),
    }


#: the authors' commit the fidelity notes refer to
AUTHORS_COMMIT = "251b4f6"


def description() -> str:
    """The public page: what LOKI is, its tasks, every metric and every choice we made."""
    metrics = "\n".join(f"- **{spec.title}** (`{name}`): {spec.description}"
                         for name, spec in Loki.metrics.items())
    return f"""# LOKI

LOKI (Ye et al., *LOKI: A Comprehensive Synthetic Data Detection Benchmark using Large Multimodal
Models*, ICLR 2025) asks large multimodal models whether video, image, 3D, text and audio samples
are AI-generated, and why. This is a demo pack with procedural media in LOKI's shape.

## Tasks
- **Judgment** (yes/no): every sample is asked twice, "Is the provided ... generated by AI?"
  (`phrasing` = `ask_fake`) and "Is the provided ... real?" (`ask_real`), as in LOKI 3.3 and C.2.
- **Multiple choice** (A/B): pick the AI-generated (or the real) one of a same-domain pair; every
  pair is asked both ways.
- **Abnormal detail selection** (video, image; A-D): pick the inconsistent detail.
- **Abnormal explanation** (video, image, 3D): explain why the sample is AI-generated; a judge
  rates the answer against the human annotation.

## Metrics
{metrics}

## Choices where the paper is silent
- The headline is the paper's plain accuracy; the authors' released code's subcategory-balanced
  accuracy is the second column. For multiple choice its two classes are the two phrasings.
- "Overall" (`scope = without_audio`) excludes audio, as the paper's Table 2 does; the unscoped
  overall includes audio. Both are shown; the per-difficulty table (Table 4) is over video, image,
  3D and text and appears only when a submission covers all four.
- Difficulty is hidden (it is derived from human errors, which correlate with the truth); it is
  still a breakdown axis. Video and 3D subcategories are generators; a real sample carries the
  subcategory of the fake it is paired with.
- Free-text answers are read with the authors' own parsers, rule for rule (see "Fidelity" below).
- Explanation ratings use a 0-5 scale per criterion (the paper: 1-5) so that a refusal or a
  verdict of "authentic" scores 0; the total is normalized to 0-100. Every number names its judge.
- 95% confidence intervals: bootstrap over items (exact binomial resampling of counts; the
  balanced accuracy resamples within each type and class), 1,000 resamples, fixed seed.

{fidelity_section()}"""


def fidelity_section() -> str:
    """The page's account of which authors' function each number reproduces (docs/fidelity.md)."""
    return f"""## Fidelity to the authors' code
Reproduced from opendatalab/LOKI `lm_evaluate/tasks/loki.py` at {AUTHORS_COMMIT} (the file last
changed in 2a5723b), pinned by `tests/conformance/test_loki_*.py` and re-checked against the
authors' code by `conformance/check.py`.

| Number | Authors' function | Deliberate difference |
|---|---|---|
| yes/no answer read from `response` | `Loki.parse_true_or_false`, then `Loki.eval_open` | none |
| option letter read from `response` | `Loki.parse_multi_choice_response`, then `Loki.eval_multi_choice` | where they call `random.choice` (nothing read) the row counts 1/#options, the expected value of their draw |
| `accuracy` | mean of their per-row `accuracy` (`Task.process_responses`); paper C.2 | none (their code prints only the aggregate below) |
| `balanced_accuracy`, per modality | `Loki.aggregate_results` `total_accuracy` of that file | overall numbers combine files with the same weights (number of fakes); a file without reals uses fake accuracy alone (theirs divides by zero) |
| `balanced_accuracy`, per subcategory | `aggregate_results` `per_metric_accuracy` of the type whose fakes are the subcategory's | shown only where that type is exactly one subcategory |
| `unparsable` | rows where `parse_multi_choice_response` draws at random or `parse_true_or_false` says "other" | none |
| `nbi`, recalls, per-generator and per-phrasing accuracy, intervals | not in their code (paper 4.1, C.2) | leaderboard additions |
| `explanation_score` | their GPT-4o judge in `Loki.metric` | a pluggable judge; its identity is on every number |

Their rules are kept with their quirks: "The first one." reads nothing (their option texts keep the
period their stripping removes) and counts 1/2; "Answer: B" and "USA." read B and A (a letter
followed by a space anywhere); an exact option text is their answer *text*, which never equals the
letter, so it is wrong; "Not sure" is "no". No more lenient reading is offered.

In a pack built from the authors' release, their submission format `{{"model": ...,
"responses": [...]}}` (what `run.py --predict_only` writes) is accepted, aligned by the authors'
file and index: add
`"source": "image/true_or_false.json"` (the file's path under `data_json`); without it the file is
the only one of that length. One document per line answers several files at once. A list that
cannot be aligned (wrong length, unknown file, several possible files) is refused with the reason.
"""


AGREEMENT = """# LOKI data-use agreement

By requesting access you agree, for yourself and your organisation, that:

1. You use the data only to research, evaluate or improve the detection and explanation of
   synthetic media.
2. You will not use the data, or models trained on it, to deceive people, to impersonate any
   person, to manipulate political opinion or elections, to commit fraud, or to harass anyone.
3. You will not train generative models on the AI-generated samples to make their output harder
   to detect, nor redistribute the samples outside your team.
4. You will not try to recover the held-out labels, and you will report any leak you find.
5. Copyright and licences of the source datasets remain with their owners; you follow them.
6. Publications that use the data cite Ye et al., ICLR 2025.

Access can be revoked if these terms are broken; all downloads are logged.
"""


def generate(out: Path, *, scale: str = "small", seed: int = 0) -> Path:
    """Write the LOKI demo pack to ``out``; deterministic for (scale, seed)."""
    if scale not in PAIRS:
        raise ValueError(f"scale must be one of {sorted(PAIRS)}, got {scale!r}")
    rng = np.random.default_rng([seed, 1])
    pairs = _samples(scale, seed, rng)
    with PackWriter(Path(out), meta(), description=description(),
                    agreement=AGREEMENT) as w:
        rows = []
        for pair in pairs:
            unit = f"{pair['modality']}:{pair['key']}"
            split = assign_split(unit, seed=seed)
            for task, item, label in _questions(pair, rng, scale == "small", w):
                if item.get("media") is None:
                    item.pop("media", None)
                item["task"] = task
                if split == "test":
                    label["part"] = assign_part(unit, seed=seed)
                rows.append((split, item, {"id": item["id"], **label}))
        for i in rng.permutation(len(rows)):  # row order must not reveal fake-before-real
            w.add(*rows[i])
    return Path(out)
