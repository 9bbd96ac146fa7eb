"""TriDF's artifact taxonomy as data (TriDF, section 3.2 and appendix C, tables 5 and 6).

`TRIDF_ARTIFACTS` is the fixed, ordered list of the 27 artifacts the OEQ metrics (Cover, CHAIR,
Hal, F0.5) are computed over; `ARTIFACT_KEYS` is the same order as snake_case keys, so a bool
matrix ``n x 27`` has one column per key in this order.

Definitions are the paper's (tables 5 and 6) for the 25 artifacts it defines. The benchmark list in
the paper's main text also names "audio-visual desynchronization" and "emotional contradiction"
without a table entry; their definitions here are ours, written in the same style, and are marked
with ``defined_by="leaderboard"``. The paper's table calls "spatial & contact incoherence" just
"Spatial Incoherence"; we keep the longer name, which the benchmark's list uses.

`modalities` says where an artifact can be annotated (image, video, audio). A judge maps a response
only onto the artifacts of the item's modality (`artifacts_for`), which mirrors the paper's
"array of predefined artifacts ... to filter unnecessary artifacts" (section 3.4).
"""
from __future__ import annotations

from dataclasses import dataclass

QUALITY = "quality"
SEMANTIC = "semantic"
ARTIFACT_TYPES = (QUALITY, SEMANTIC)
MODALITIES = ("image", "video", "audio")

_VISUAL = ("image", "video")


@dataclass(frozen=True)
class Artifact:
    key: str
    name: str
    definition: str
    type: str
    modalities: tuple[str, ...]
    defined_by: str = "paper"


TRIDF_ARTIFACTS: tuple[Artifact, ...] = (
    # Quality artifacts, visual signal (table 5).
    Artifact("blurriness", "Blurriness",
             "The loss of sharpness and fine detail, making the image appear out of focus.",
             QUALITY, _VISUAL),
    Artifact("blockiness", "Blockiness",
             "Visible square or rectangular patterns on the screen.", QUALITY, _VISUAL),
    Artifact("noise", "Noise",
             "Random, fine speckles or a sandy texture across the image.", QUALITY, _VISUAL),
    Artifact("banding", "Banding",
             "Distinct, abrupt steps or bands in areas that should have a smooth color gradient.",
             QUALITY, _VISUAL),
    Artifact("color_inconsistency", "Color Inconsistency",
             "Colors appear unnatural, with excessive saturation or vibrancy.", QUALITY, _VISUAL),
    Artifact("blending_artifacts", "Blending Artifacts",
             "Visible boundaries where elements should merge smoothly.", QUALITY, _VISUAL),
    Artifact("lighting_inconsistency", "Lighting Inconsistency",
             "Illumination that does not agree across the scene.", QUALITY, _VISUAL),
    Artifact("unnatural_texture", "Unnatural Texture",
             "The surface is overly smooth, missing natural irregularities.", QUALITY, _VISUAL),
    # Quality artifacts, temporal (table 5).
    Artifact("temporal_artifacts", "Temporal Artifacts",
             "Inconsistencies across frames that break motion continuity.", QUALITY, ("video",)),
    Artifact("flicker", "Flicker",
             "Noticeable and often rapid variation in the overall brightness.", QUALITY,
             ("video",)),
    # Quality artifacts, audio signal (table 5).
    Artifact("clipping", "Clipping",
             "Harsh, fuzzy, or crackling sound when audio is too loud.", QUALITY, ("audio",)),
    Artifact("hiss", "Hiss",
             "High-frequency static noise (e.g., \u201cshhhh\u201d sound).", QUALITY, ("audio",)),
    Artifact("buzz", "Buzz",
             "Low-frequency tone, typically caused by electrical interference.", QUALITY,
             ("audio",)),
    Artifact("pops", "Pops",
             "Abrupt, short, and sharp sounds that interrupt the audio.", QUALITY, ("audio",)),
    # Semantic artifacts, physics and environment (table 6).
    Artifact("reflection_inconsistency", "Reflection Inconsistency",
             "Reflections do not match the subject, lighting, or scene geometry.", SEMANTIC,
             _VISUAL),
    Artifact("shadow_inconsistency", "Shadow Inconsistency",
             "Shadows do not match the subject, lighting, or scene geometry.", SEMANTIC, _VISUAL),
    Artifact("spatial_incoherence", "Spatial & Contact Incoherence",
             "Objects or people fail to make contact with surfaces or each other.", SEMANTIC,
             _VISUAL),
    Artifact("unrealistic_background", "Unrealistic Background",
             "Background lacks plausible detail, perspective, or depth.", SEMANTIC, _VISUAL),
    # Semantic artifacts, human biology (table 6).
    Artifact("anatomical_inconsistency", "Anatomical Inconsistency",
             "Human anatomy is implausible (e.g., distorted limbs).", SEMANTIC, _VISUAL),
    Artifact("unnatural_expressions", "Unnatural Expressions",
             "Facial expressions do not align with emotion or context.", SEMANTIC, _VISUAL),
    Artifact("unnatural_gaze", "Unnatural Gaze or Blinking",
             "Eye direction or blink behavior appears robotic.", SEMANTIC, _VISUAL),
    Artifact("unnatural_movement", "Unnatural Body or Head Movement",
             "Motion lacks physical plausibility.", SEMANTIC, ("video",)),
    # Semantic artifacts, objects and language (table 6).
    Artifact("object_integrity_flaws", "Object Integrity Flaws",
             "The object is incomplete, broken, or internally inconsistent.", SEMANTIC, _VISUAL),
    Artifact("unrecognizable_text", "Unrecognizable Text",
             "Text is unrecognizable, incomplete, broken, or distorted.", SEMANTIC, _VISUAL),
    Artifact("unnatural_prosody", "Unnatural Prosody",
             "Speech sounds robotic, monotonous, or flat.", SEMANTIC, ("audio", "video")),
    # Named in the benchmark's artifact list, not defined in the paper's tables.
    Artifact("audio_visual_desync", "Audio-Visual Desynchronization",
             "Lip movements or on-screen events do not line up in time with the speech or sound.",
             SEMANTIC, ("video",), defined_by="leaderboard"),
    Artifact("emotional_contradiction", "Emotional Contradiction",
             "The emotion conveyed by the voice contradicts the words, the face, or the context.",
             SEMANTIC, ("audio", "video"), defined_by="leaderboard"),
)

ARTIFACT_KEYS: tuple[str, ...] = tuple(a.key for a in TRIDF_ARTIFACTS)
ARTIFACTS_BY_KEY: dict[str, Artifact] = {a.key: a for a in TRIDF_ARTIFACTS}


def artifacts_for(modality: str) -> tuple[str, ...]:
    """Keys of the artifacts that can be annotated for `modality` ("image", "video", "audio")."""
    if modality not in MODALITIES:
        raise ValueError(f"modality must be one of {MODALITIES}, got {modality!r}")
    return tuple(a.key for a in TRIDF_ARTIFACTS if modality in a.modalities)


def validate_keys(keys, *, what: str = "artifacts") -> frozenset[str]:
    """Return `keys` as a frozenset, raising ValueError naming any key not in the taxonomy."""
    if isinstance(keys, str):
        raise ValueError(f"{what} must be a list of artifact keys, got the string {keys!r}")
    keys = frozenset(keys)
    unknown = sorted(k for k in keys if k not in ARTIFACTS_BY_KEY)
    if unknown:
        raise ValueError(f"{what}: unknown artifact key(s) {unknown}; "
                         f"allowed: {list(ARTIFACT_KEYS)}")
    return keys
