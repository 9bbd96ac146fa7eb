"""Demo pack for TriDF: its 16 DeepFake tasks, question types and artifacts; procedural media.

Each DeepFake task gets real-fake pairs (TriDF 3.1: strict one-to-one pairs). A fake sample is
annotated with 1-4 artifacts of its modality (`leaderboard.core.taxonomy.artifacts_for`) and, for
image and video, a location for each. From it come TFQs (artifact, location type-1 "any artifact
in this region?", location type-2 "this artifact in this region?"; yes/no balanced), MCQs (four
artifacts or locations plus "E. None of the options are correct", 0-3 of A-D correct, evenly
spread as in TriDF appendix E), one OEQ type A; the fake and its real partner each get an OEQ
type B. Audio has no location questions (TriDF Table 7).

``small``: 3 pairs per task (48 pairs, about 380 questions) with media. ``large``: 9,700 pairs,
giving the paper's counts (appendix F: about 23K TFQ, 24K MCQ, 29K OEQ), no media.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from leaderboard.core.benchmarks.tridf import TriDF
from leaderboard.core.taxonomy import ARTIFACTS_BY_KEY, artifacts_for
from leaderboard.demo import media
from leaderboard.demo.writer import PackWriter, assign_part, assign_split

DEEPFAKE_TASKS = {  # TriDF Table 4: task -> generators
    "image": {
        "face_swapping": ("diffswap", "blendface", "cscs"),
        "facial_attribute": ("preim3d", "adatrans", "styleganex"),
        "image_editing": ("mige", "step1x-edit", "omnigen2", "gemini-2.5-flash-image"),
        "id_preserving_generation": ("mige", "uno", "omnigen2", "gemini-2.5-flash-image"),
        "generation": ("sd3", "pixart-sigma", "flux.1", "gpt-4o-image"),
    },
    "video": {
        "face_swapping": ("hififace", "infoswap", "faceadapter"),
        "face_reenactment": ("mcnet", "hyperreenact", "liveportrait"),
        "lip_syncing": ("dinet", "latentsync", "musetalk"),
        "video_editing": ("videopainter", "vace", "wan-edit"),
        "talking_head": ("sadtalker", "aniportrait", "hallo2", "d-id"),
        "full_body_puppetry": ("champ", "motioneditor", "magicdance", "controlnext"),
        "id_preserving_generation": ("hunyuancustom", "vace", "phantom", "kling"),
        "image_to_video": ("ltx-video", "cogvideox", "wan2.2", "veo3"),
        "human_scene_generation": ("ltx-video", "pyramid-flow", "skyreels-a2", "veo3"),
    },
    "audio": {
        "voice_cloning": ("xtts", "openvoice", "cosyvoice-2.0", "elevenlabs"),
        "voice_conversion": ("speecht5-vc", "seed-vc", "diff-hiervc"),
    },
}
LOCATIONS = ("eyes", "nose", "mouth", "ear", "hair", "skin", "hands", "limbs", "clothing",
             "background")
PAIRS_PER_TASK = {"small": 3, "large": 9700 // 16}
NONE_OPTION = "None of the options are correct"


def _hid(seed: int, *parts) -> str:
    return hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).hexdigest()[:12]


def _annotate(rng: np.random.Generator, modality: str) -> dict[str, str | None]:
    """Artifacts of a fake sample, each with its location (None for audio)."""
    pool = list(artifacts_for(modality))
    arts = [str(a) for a in rng.choice(pool, size=int(rng.integers(1, 5)), replace=False)]
    if modality == "audio":
        return {a: None for a in arts}
    return {a: str(rng.choice(LOCATIONS)) for a in arts}


def _tfq(rng, modality: str, ann: dict, kind: str) -> tuple[dict, str]:
    noun = modality
    yes = bool(rng.integers(2))
    locs = sorted({v for v in ann.values() if v})
    if kind == "artifact":
        absent = [a for a in artifacts_for(modality) if a not in ann]
        art = str(rng.choice(sorted(ann) if yes or not absent else absent))
        yes = art in ann
        name = ARTIFACTS_BY_KEY[art].name.lower()
        return {"question": f"Do you observe {name} in this {noun}? Answer true or false.",
                "question_type": "artifact", "artifact_type": ARTIFACTS_BY_KEY[art].type,
                "artifact": art}, "yes" if yes else "no"
    if kind == "location":  # type 1: any artifact in a region
        others = [x for x in LOCATIONS if x not in locs]
        loc = str(rng.choice(locs if yes else others))
        return {"question": f"Is there any artifact in the {loc} region of this {noun}? "
                            "Answer true or false.", "question_type": "location",
                "location": loc}, "yes" if loc in locs else "no"
    art = str(rng.choice(sorted(ann)))  # type 2: this artifact in this region
    loc = ann[art] if yes else str(rng.choice([x for x in LOCATIONS if x != ann[art]]))
    name = ARTIFACTS_BY_KEY[art].name.lower()
    return {"question": f"Is there {name} in the {loc} of this {noun}? Answer true or false.",
            "question_type": "location", "artifact_type": ARTIFACTS_BY_KEY[art].type,
            "artifact": art, "location": loc}, "yes" if ann[art] == loc else "no"


def _mcq(rng, modality: str, ann: dict, kind: str) -> tuple[dict, list[str], list[str]]:
    """(item fields, correct letters, correct artifacts) of one MCQ."""
    k_target = int(rng.integers(0, 4))  # 0-3 correct among A-D: E is correct when none is
    public: dict = {"question_type": kind}
    if kind == "artifact":
        atype = str(rng.choice(["quality", "semantic"]))
        pool = [a for a in artifacts_for(modality) if ARTIFACTS_BY_KEY[a].type == atype]
        if len(pool) < 4:  # too few artifacts of one type (audio): mix both types
            pool = list(artifacts_for(modality))
        else:
            public["artifact_type"] = atype
        good = [a for a in pool if a in ann]
        bad = [a for a in pool if a not in ann]
        names = lambda keys: [ARTIFACTS_BY_KEY[a].name for a in keys]  # noqa: E731
        q = f"Which of the following artifacts appear in this {modality}? Select all that apply."
    else:
        locs = {v for v in ann.values() if v}
        good = [x for x in LOCATIONS if x in locs]
        bad = [x for x in LOCATIONS if x not in locs]
        names = lambda keys: [x.capitalize() for x in keys]  # noqa: E731
        q = f"Where do artifacts appear in this {modality}? Select all that apply."
    k = min(k_target, len(good), 4)
    k = max(k, 4 - len(bad))
    picked_good = [str(x) for x in rng.permutation(good)[:k]]
    picked = picked_good + [str(x) for x in rng.permutation(bad)[:4 - k]]
    picked = [picked[i] for i in rng.permutation(4)]
    options = dict(zip("ABCD", names(picked)))
    options["E"] = NONE_OPTION
    letters = [c for c, x in zip("ABCD", picked) if x in picked_good] or ["E"]
    arts = picked_good if kind == "artifact" else []
    return {**public, "question": q, "options": options}, letters, arts


OEQ_A = ("This {m} is a DeepFake. As a forensics analyst, list every artifact you notice under "
         "clear headings, avoiding false positives.")
OEQ_B = ("Decide whether this {m} is authentic or manipulated. Start with \"Likely Authentic\" or "
         "\"Likely Manipulated\", then list the artifacts you observe and your reasoning.")


def _pair_rows(rng, seed: int, modality: str, task: str, gen: str, k: int, with_media: bool,
               w: PackWriter):
    """(task, item, label) rows of one real-fake pair."""
    key = _hid(seed, modality, task, k)
    ann = _annotate(rng, modality)
    hidden = {"deepfake_task": task, "generator": gen}
    files = {}
    for truth in ("fake", "real"):
        hid = _hid(seed, key, truth)
        if not with_media:
            files[truth] = None
            continue
        ext = {"image": "png", "video": "avi", "audio": "wav"}[modality]
        rel, path = w.media(f"{modality}/{hid}.{ext}")
        fake = truth == "fake"
        if modality == "image":
            media.image(path, seed=hid, fake=fake, style=str(rng.choice(["blobs", "landscape",
                                                                         "circles"])))
        elif modality == "video":
            media.video(path, seed=hid, fake=fake)
        else:
            media.audio(path, seed=hid, kind="speech", fake=fake)
        files[truth] = [rel]
    tfq_kinds = ["artifact"] if modality == "audio" else ["artifact", "location", "location2"]
    for j in range(2 + int(rng.random() < 0.4)):
        fields, answer = _tfq(rng, modality, ann, tfq_kinds[(k + j) % len(tfq_kinds)])
        yield "tfq", {"id": f"tridf/tfq/{key}/{j}", "modality": modality, **fields,
                      "media": files["fake"]}, {**hidden, "answer": answer}
    mcq_kinds = ["artifact"] if modality == "audio" else ["artifact", "location"]
    for j in range(2 + int(rng.random() < 0.5)):
        fields, letters, arts = _mcq(rng, modality, ann, mcq_kinds[(k + j) % len(mcq_kinds)])
        yield "mcq", {"id": f"tridf/mcq/{key}/{j}", "modality": modality, **fields,
                      "media": files["fake"]}, {**hidden, "answer": letters, "artifacts": arts}
    yield "oeq_a", {"id": f"tridf/oeqa/{key}", "modality": modality, "media": files["fake"],
                    "question": OEQ_A.format(m=modality)}, {
        **hidden, "artifacts": sorted(ann), "label": "fake"}
    for truth in ("fake", "real"):
        yield "oeq_b", {"id": f"tridf/oeqb/{_hid(seed, key, truth)}", "modality": modality,
                        "media": files[truth], "question": OEQ_B.format(m=modality)}, {
            **hidden, "artifacts": sorted(ann) if truth == "fake" else [], "label": truth}


def meta() -> dict:
    """The pack's meta.json (a fresh dict); the pack builder starts from it too."""
    mods = ["image", "video", "audio"]
    return {
        "key": "tridf", "title": "TriDF", "version": "1", "modalities": mods,
        "tasks": [
            {"key": "tfq", "kind": "yesno", "title": "True/false questions", "modalities": mods,
             "headline": "accuracy", "secondary": [],
             "description": "Perception: is this artifact (or any artifact) present here?"},
            {"key": "mcq", "kind": "multiselect", "title": "Multiple-choice questions",
             "modalities": mods, "headline": "mcq_score", "secondary": ["mcq_score_clamped"],
             "description": "Perception: select every artifact or location that applies "
                            "(E = none of the options)."},
            {"key": "oeq_a", "kind": "artifacts", "title": "Open-ended, type A",
             "modalities": mods, "headline": "f05", "secondary": ["cover", "chair"],
             "description": "Told the sample is fake: list all artifacts."},
            {"key": "oeq_b", "kind": "artifacts", "title": "Open-ended, type B",
             "modalities": mods, "headline": "accuracy", "secondary": ["f05", "cover"],
             "description": "Decide authentic or manipulated, then list the artifacts."},
        ],
        "splits": ["dev", "test"],
    }


def fidelity_section() -> str:
    """The page section naming, per metric, the authors' function each number reproduces."""
    return """## How each number is computed: the authors' code
Every official column gives the number the authors' own code gives on the same predictions
(TriDF: j1anglin/TriDF at f041a19, `3_Benchmark/inference/`; TRIDENT: j1anglin/TRIDENT_MM26MGC at
985d8fb). Free text is read exactly as they read it, surprising rules included:

| Column | Reproduces | Reading of free text |
|---|---|---|
| TFQ `accuracy` | `score_perception_original.py` `score` | `normalize_tf_answer`: the first line must start with "yes" or "no" as a word; "True", "**Yes**", "> yes" do not read |
| MCQ `mcq_score` (`_clamped`) | `score_mc_answer` (unclamped; clamped at 0) | `normalize_mc_answer`: first line only, upper-cased; "none" adds E; with a comma only single-letter tokens count |
| TFQ, MCQ `invalid_predictions` | `score` (`invalid_predictions`: answers from which the authors' reader reads nothing) | TFQ: no yes/no read; MCQ: an empty answer only. `no_letter_read` (MCQ) is ours: no option letter read, empty answers included |
| OEQ B `accuracy` | `eval_accuracy.py` (strict) | `get_prediction`: lines from the last upward, "likely authentic" winning on a line holding both; exact phrases |
| OEQ `cover`, `chair`, `hal`, `f05` | `cal_score.py` `CoverCalculator` | only artifacts that are columns of the sample's ground-truth CSV count; a cell is true by `parse_bool_truth` ("[ ]" is false); type B CHAIR = 1 for a fake called authentic |
| `trident_accuracy` (TFQ, OEQ B), `trident_mcq_score`, `trident_chair/hal/f05` (OEQ B) | TRIDENT `evaluate_predictions.py` `score_choice`, `score_typeb_oeq`, `score_oeq_artifacts` | `_normalize_tf_answer` ("true"/"false" in the first two lines: "yes"/"no" do not read), `_normalize_mc_answer` (A-E in the first three lines), `_parse_typeb_label` (first non-empty line); no CHAIR penalty |
| composite `tcs`, `s_det`, `s_hal`, `s_perc` | TRIDENT `compute_tcs_from_tasks` | from the `trident_*` columns and OEQ A `f05` |

Deliberate differences: a structured `answer` or `label` is taken as given (the kit's
`parsed_answer`, `parsed_choices`, `parsed_label`); the authors' scorers skip duplicate or
unmatched records, which here are errors; artifacts are mapped by the configured judge (or given
as `artifacts`), not by the authors' GPT mapper, and the judge is named with every number."""


def description() -> str:
    """The public page: TriDF, its tasks, every metric, and our choices."""
    metrics = "\n".join(f"- **{spec.title}** (`{name}`): {spec.description}"
                        for name, spec in TriDF.metrics.items())
    tasks = "; ".join(f"{m}: {', '.join(t.replace('_', ' ') for t in ts)}"
                      for m, ts in DEEPFAKE_TASKS.items())
    return f"""# TriDF

TriDF evaluates interpretable DeepFake detection by multimodal LLMs along three dimensions:
Perception (TFQ, MCQ, OEQ type A), Detection (OEQ type B) and Hallucination (CHAIR, Hal and F0.5
of the open-ended answers). This demo pack has procedural media in TriDF's shape.

DeepFake tasks ({sum(map(len, DEEPFAKE_TASKS.values()))}): {tasks}. Artifacts: the 27 of the
taxonomy (quality and semantic), each with a key that predictions may use in `artifacts`.

## Metrics
{metrics}

## Choices where the paper is silent
- MCQ: the unclamped score (the paper) is the headline; the clamped score is the second column.
  An empty answer, or one naming no option letter, scores 0. Two counts are shown: *invalid
  predictions*, the authors' count (`invalid_predictions`: empty answers only), and *no option
  letter read*, ours (empty answers and answers such as "**B**, **D**" or "AB" alike).
- OEQ: a submission may give `artifacts` (taxonomy keys) itself; those numbers are marked
  "self-mapped". Otherwise the configured judge maps `response` to the artifacts of the item's
  modality, and its identity is part of the number. Means are over samples with annotated
  artifacts, so real samples of type B count only towards detection accuracy.
- Type B decision: `label` when given, else the response read as the authors read it (below); no
  decision counts as wrong and is reported as unparsable.
- Per artifact: Cover is the share of the samples annotated with it whose mapped answer names it;
  for MCQ, the mean score of the questions where it is a correct option.
- TCS (per modality, 0-100) is shown only when TFQ, MCQ and both OEQ types are scored.
- 95% bootstrap confidence intervals over items (exact binomial resampling for accuracies), fixed
  seed.

{fidelity_section()}
"""


AGREEMENT = """# TriDF data-use agreement

TriDF contains DeepFakes of real people's faces and voices. By requesting access you agree that:

1. You use the data only for research on detecting, explaining and mitigating DeepFakes.
2. You will not use the data, or anything derived from it, to deceive, impersonate or defame any
   person, to manipulate political opinion, to commit fraud, or to harass anyone.
3. You will not train generative models on the DeepFakes, nor use them to make DeepFakes harder
   to detect, nor redistribute any sample outside your team.
4. You will honour removal requests from depicted people forwarded by the maintainers, deleting
   the samples concerned.
5. You will not try to recover held-out labels; the licences of the source datasets apply.

Access can be revoked if these terms are broken; all downloads are logged.
"""


def generate(out: Path, *, scale: str = "small", seed: int = 0) -> Path:
    """Write the TriDF demo pack to ``out``; deterministic for (scale, seed)."""
    if scale not in PAIRS_PER_TASK:
        raise ValueError(f"scale must be one of {sorted(PAIRS_PER_TASK)}, got {scale!r}")
    rng = np.random.default_rng([seed, 2])
    with PackWriter(Path(out), meta(), description=description(), agreement=AGREEMENT) as w:
        rows = []
        for modality, tasks in DEEPFAKE_TASKS.items():
            for task, gens in tasks.items():
                for k in range(PAIRS_PER_TASK[scale]):
                    unit = f"{modality}:{task}:{k}"
                    split = assign_split(unit, seed=seed)
                    gen = gens[k % len(gens)]
                    for tk, item, label in _pair_rows(rng, seed, modality, task, gen, k,
                                                      scale == "small", w):
                        item["task"] = tk
                        if item.get("media") is None:
                            item.pop("media")
                        if split == "test":
                            label["part"] = assign_part(unit, seed=seed)
                        rows.append((split, item, {"id": item["id"], **label}))
        for i in rng.permutation(len(rows)):  # row order must not reveal the truth
            w.add(*rows[i])
    return Path(out)
