"""Judge benchmarks: mapping throughput on CPU, and per-artifact precision/recall of a mapper.

Run from the repository root:

    .venv/bin/python -m perf.bench_judges [--n 300] [--judges rules@1 rules local-minilm]

`evaluate_mapper(judge, examples)` is the reusable part: give it (response, true artifact set)
pairs, e.g. from demo-pack annotations, and it returns precision, recall and F1 per artifact plus
micro and macro averages. Without real annotations this script exercises it on synthetic
responses (`synthetic_examples`), written in wording distinct from the MiniLM calibration set, so
the MiniLM figures are out-of-sample (but synthetic: treat them as a smoke test, not a quality
claim).
"""
from __future__ import annotations

import argparse
import random
import time
from collections.abc import Iterable

from leaderboard.core.taxonomy import ARTIFACT_KEYS, validate_keys
from leaderboard.judges import get_judge

# Two phrasings per artifact, and denials ("no X") that must not be mapped.
PHRASES: dict[str, tuple[str, ...]] = {
    "blurriness": ("the region around {loc} is blurred", "{loc} looks out of focus"),
    "blockiness": ("{loc} shows blocky compression artifacts", "pixelated squares appear on {loc}"),
    "noise": ("{loc} is covered in grainy noise", "fine speckle noise sits on {loc}"),
    "banding": ("the gradient near {loc} shows banding", "{loc} has stepped colour bands"),
    "color_inconsistency": ("{loc} has oversaturated colours", "the colour of {loc} is unnatural"),
    "blending_artifacts": ("a visible seam surrounds {loc}", "{loc} is poorly blended"),
    "lighting_inconsistency": ("the lighting on {loc} is inconsistent",
                               "{loc} is lit from a different direction than the scene"),
    "unnatural_texture": ("{loc} looks waxy and plastic", "{loc} is unnaturally smooth"),
    "temporal_artifacts": ("{loc} changes shape between frames", "{loc} jitters across frames"),
    "flicker": ("the brightness of {loc} flickers", "{loc} strobes in brightness"),
    "clipping": ("the loud passages are clipped and distorted", "the audio crackles when loud"),
    "hiss": ("a hiss runs under the speech", "there is static hiss in the recording"),
    "buzz": ("a low buzz is audible", "an electrical hum sits under the voice"),
    "pops": ("clicks and pops interrupt the audio", "there are popping sounds between words"),
    "reflection_inconsistency": ("the reflection in {loc} does not match the scene",
                                 "the mirror reflection of {loc} is wrong"),
    "shadow_inconsistency": ("the shadow of {loc} points the wrong way", "{loc} casts no shadow"),
    "spatial_incoherence": ("{loc} floats above the ground", "{loc} passes through the table"),
    "unrealistic_background": ("the background behind {loc} is distorted",
                               "the background lacks depth"),
    "anatomical_inconsistency": ("{loc} has extra fingers", "{loc} is anatomically distorted"),
    "unnatural_expressions": ("the expression of {loc} is stiff and unnatural",
                              "the smile on {loc} looks forced"),
    "unnatural_gaze": ("the eyes never blink", "the gaze is fixed and robotic"),
    "unnatural_movement": ("the head movement is jerky", "{loc} moves in a robotic way"),
    "object_integrity_flaws": ("the glasses near {loc} are broken and incomplete",
                               "the earrings are mismatched and deformed"),
    "unrecognizable_text": ("the text near {loc} is garbled",
                            "the letters on the sign are illegible"),
    "unnatural_prosody": ("the voice is monotonous", "the intonation is flat and robotic"),
    "audio_visual_desync": ("the lips are out of sync with the audio",
                            "the mouth movements do not match the speech"),
    "emotional_contradiction": ("the cheerful tone contradicts the sad words",
                                "the emotion in the voice does not match the context"),
}
DENIALS: dict[str, str] = {
    "blurriness": "there is no blur", "noise": "no visible noise", "flicker": "without any flicker",
    "shadow_inconsistency": "the shadows look natural", "hiss": "no hiss is audible",
    "unrecognizable_text": "the text is legible", "unnatural_gaze": "the eyes blink naturally",
    "lighting_inconsistency": "the lighting is consistent",
}
LOCATIONS = ("the nose", "the left ear", "the hair", "the chin", "the cheek", "the forehead")


def synthetic_examples(n: int, *, seed: int = 0) -> list[tuple[str, frozenset[str]]]:
    """`n` responses, each naming 1-3 artifacts and 0-2 denials of other ones."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        keys = rng.sample(ARTIFACT_KEYS, rng.randint(1, 3))
        parts = [rng.choice(PHRASES[k]).format(loc=rng.choice(LOCATIONS)) for k in keys]
        denials = [k for k in DENIALS if k not in keys]
        parts += [DENIALS[k] for k in rng.sample(denials, rng.randint(0, 2))]
        rng.shuffle(parts)
        text = "Likely Manipulated. " + " ".join(p[0].upper() + p[1:] + "." for p in parts)
        out.append((text, frozenset(keys)))
    return out


def evaluate_mapper(judge, examples: Iterable[tuple[str, Iterable[str]]], *,
                    candidates: list[str] | None = None) -> dict:
    """Per-artifact precision, recall, F1 and support of `judge.map_artifacts` on `examples`.

    Returns ``{"per_artifact": {key: {...}}, "micro": {...}, "macro": {...}, "n": int}``. An
    artifact with no positives and no predictions has undefined scores (None), left out of macro.
    """
    examples = [(t, validate_keys(k)) for t, k in examples]
    predicted = judge.map_artifacts([t for t, _ in examples], candidates=candidates)
    keys = candidates or list(ARTIFACT_KEYS)
    per, tp_all, fp_all, fn_all = {}, 0, 0, 0
    for key in keys:
        tp = sum(key in p and key in y for p, (_, y) in zip(predicted, examples, strict=True))
        fp = sum(key in p and key not in y for p, (_, y) in zip(predicted, examples, strict=True))
        fn = sum(key not in p and key in y for p, (_, y) in zip(predicted, examples, strict=True))
        tp_all, fp_all, fn_all = tp_all + tp, fp_all + fp, fn_all + fn
        per[key] = _prf(tp, fp, fn)
    defined = [v for v in per.values() if v["f1"] is not None]
    macro = {m: (sum(v[m] or 0.0 for v in defined) / len(defined) if defined else None)
             for m in ("precision", "recall", "f1")}
    return {"per_artifact": per, "micro": _prf(tp_all, fp_all, fn_all), "macro": macro,
            "n": len(examples)}


def _prf(tp: int, fp: int, fn: int) -> dict:
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None and recall is None:
        f1 = None
    else:
        f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return {"precision": precision, "recall": recall, "f1": f1, "support": tp + fn}


def throughput(judge, responses: list[str], *, repeat: int = 1) -> float:
    """Responses mapped per second of this process's CPU time, the best of ``repeat`` passes
    (after one warm-up call that loads any model). CPU time, not wall time: on a shared machine
    other processes' load would otherwise decide the comparison between judges."""
    judge.map_artifacts(responses[:2])
    best = 0.0
    for _ in range(repeat):
        started = time.process_time()
        judge.map_artifacts(responses)
        best = max(best, len(responses) / max(time.process_time() - started, 1e-9))
    return best


def evalset_throughput(judge, part: str, *, repeat: int = 1) -> tuple[float, float]:
    """(CPU-time rate, wall-clock rate), responses/s, over the evaluation set's ``part``, each
    modality's answers in one call with its candidates (as the server and `judge_eval.quality`
    map them); best of ``repeat`` passes after a warm-up call."""
    from judge_eval.quality import load, map_rows
    rows = load(part)
    map_rows(judge, rows[:3])
    cpu = wall = 0.0
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        map_rows(judge, rows)
        cpu = max(cpu, len(rows) / max(time.process_time() - c0, 1e-9))
        wall = max(wall, len(rows) / max(time.perf_counter() - w0, 1e-9))
    return cpu, wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Benchmark judge mappers on CPU.")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--judges", nargs="+", default=["rules", "local-minilm"])
    parser.add_argument("--repeat", type=int, default=5, help="passes; the best one counts")
    parser.add_argument("--evalset", metavar="PART", choices=("dev", "heldout", "all"),
                        help="time the evaluation set's answers of PART instead (CPU-time and "
                             "wall-clock rates; no quality figures: see judge_eval.quality)")
    args = parser.parse_args(argv)
    if args.evalset:
        for name in args.judges:
            judge = get_judge(name)
            cpu, wall = evalset_throughput(judge, args.evalset, repeat=args.repeat)
            print(f"{judge.identity}: {cpu:,.0f} responses per CPU-second, {wall:,.0f} per "
                  f"wall-clock second ({args.evalset} part of the evaluation set)")
        return
    examples = synthetic_examples(args.n)
    for name in args.judges:
        judge = get_judge(name)
        rate = throughput(judge, [t for t, _ in examples], repeat=args.repeat)
        report = evaluate_mapper(judge, examples)
        micro, macro = report["micro"], report["macro"]
        print(f"{judge.identity}: {rate:,.0f} responses/s; micro P={micro['precision']:.3f} "
              f"R={micro['recall']:.3f} F1={micro['f1']:.3f}; macro F1={macro['f1']:.3f} "
              f"(n={report['n']} synthetic)")
        worst = sorted((v["f1"] or 0.0, k) for k, v in report["per_artifact"].items())[:5]
        print("  weakest F1: " + ", ".join(f"{k} {f:.2f}" for f, k in worst))


if __name__ == "__main__":
    main()
