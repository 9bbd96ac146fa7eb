"""Demo pack for UniAIDet: procedural photos and artworks, 20 "generators" in 5 families, masks.

Small scale: per domain (photo, art) 45 real images and 3 fakes per generator (120 fakes), sizes
drawn from 64x64 / 48x64 / 64x48 independently of the class. Partial fakes follow UniAIDet's
appendix A: inpainting pastes generated pixels inside a SAM-like blob; editing regenerates the whole
image and keeps only regions changed by more than tau = 40 that are larger than gamma = 20 pixels;
deepfake pastes a generated face into an ellipse. Large scale: 80,000 rows (20,000 real per domain,
1,000 fakes per generator per domain) at 256 x 256 with elliptical masks and no media.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from leaderboard.core.benchmarks.uniaidet import DOMAINS, FAMILY_OF
from leaderboard.core.generator_dates import generator_table
from leaderboard.core.metrics.masks import encode_mask
from leaderboard.demo import images
from leaderboard.demo.writer import (
    PackWriter,
    assign_part,
    assign_split,
    release_agreement,
    release_description,
)
from leaderboard.demo.writer import opaque_id as opaque_id_of

SIZES = ((64, 64), (48, 64), (64, 48))

DESCRIPTION = """# UniAIDet (demo pack)

UniAIDet evaluates AI-generated image **detection and localization** over photographs and
artworks, against 20 generators in five families: text-to-image and image-to-image (the whole
image is generated), inpainting, editing and deepfake (only part of the image is generated, and a
ground-truth mask marks those pixels). **This demo pack is procedural**: scenes, paintings and
faces are drawn, and each "generator" leaves its own low-level trace. No image is real.

## Task
`detection` (image): give `label` ("fake"/"real") and/or `score` (confidence of fake), and
optionally `mask`: the generated pixels as COCO RLE `{"size": [height, width], "counts": "..."}`
with the item's `height` and `width`. The domain (photo/art), family and generator are hidden.

## Metrics (UniAIDet 4.1, appendix B.1)
- **Acc** = (TP + TN) / all (headline); **f.Acc** = TP / (TP + FN); **r.Acc** = TN / (TN + FP);
  **AP** = average precision of the scores (sklearn's definition), n/a unless every row has one.
- **mIoU** over partial-synthesis images: IoU = |G ∩ P| / |G ∪ P|; a missing mask is empty (IoU 0).
  Your mask counts whatever your label says; masks on real or fully generated images are ignored.
- Every metric overall and per domain (photo, art); f.Acc and mIoU per family and per generator,
  overall and per domain (heat maps); art minus photo f.Acc and mIoU per generator and per family.
- 95% bootstrap intervals (items resampled within class, fixed seed).

## Fidelity to the authors
The authors have published no evaluation code or release layout that we could find, so every
metric follows the paper (appendix B.1): Acc as (TP + TN) / all (its formula repeats TN in the
denominator, a typo), f.Acc, r.Acc, AP as scikit-learn's `average_precision_score`, mIoU as the
mean IoU over partial-synthesis images only. Deliberate differences: the paper reports each split
separately (Table 3); the overall (both splits) numbers are ours. Its Table 3 shows "-" for the
mIoU of detection-only methods; here a submission without masks gets mIoU 0 (a missing mask is an
empty mask).
"""

AGREEMENT = """# UniAIDet data-use agreement (demo)

This benchmark contains generated and manipulated images, including face swaps, paired with real
photographs and artworks. Access is granted only to evaluate methods that detect and localize
AI-generated content.

You agree that you and your team will:

1. use the data only for research on detecting or localizing generated or manipulated images;
2. never use the images, masks or anything derived from them to deceive, to impersonate anyone
   (the face-swap images above all), for harassment, political manipulation or fraud;
3. not train image generators or face-swap systems on the data, and not use it to make generated
   content harder to detect;
4. respect the licences of the underlying real images and artworks, and not redistribute them;
5. delete the data when your project ends or when access is revoked, and report misuse.

Access is personal, may expire, and may be revoked if these terms are broken.
"""


def meta() -> dict:
    """The pack's meta.json (a fresh dict): shared with the pack builder, which fills in counts."""
    return {
        "key": "uniaidet", "title": "UniAIDet", "version": "1", "modalities": ["image"],
        "tasks": [{"key": "detection", "kind": "detection",
                   "title": "AI-generated image detection and localization",
                   "modalities": ["image"], "headline": "accuracy",
                   "secondary": ["miou", "average_precision"],
                   "description": "Is the image (partly) AI-generated, and which pixels?"}],
        "splits": ["dev", "test"],
        # the generators the items name, with the day each became public (issue 37)
        "generators": generator_table(FAMILY_OF, modality="image"),
    }


def description(*, source: str | None = None) -> str:
    """The public page; ``source`` (a sentence naming the authors' data) turns it into the page
    of a pack built from that data, without the demo caveat."""
    return DESCRIPTION if source is None else release_description(DESCRIPTION, source=source)


def agreement(*, demo: bool = True) -> str:
    """The data-use agreement; ``demo=False`` for a pack built from the authors' data."""
    return AGREEMENT if demo else release_agreement(AGREEMENT)


def _look(index: int) -> images.Look:
    """A distinct trait per generator index (strengths vary so detectability differs)."""
    return images.Look(blur=0.35 + 0.12 * (index % 5), grid=1.0 + 0.7 * (index % 4),
                       period=(4, 8, 16)[index % 3], saturation=1.0 + 0.06 * (index % 6),
                       contrast=1.0 + 0.04 * (index % 3), noise=1.5 * (index % 2))


_LOOKS = {g: _look(i) for i, g in enumerate(FAMILY_OF)}


opaque_id = functools.partial(opaque_id_of, "ua")  # opaque_id(*parts, seed=...)


def _scene(domain: str, rng, h: int, w: int) -> np.ndarray:
    return images.natural_image(rng, h, w) if domain == "photo" else images.artwork(rng, h, w)


def render(domain: str, generator: str | None, rng, h: int, w: int):
    """(image, mask or None) for a real image (generator None) or one generator's fake."""
    if generator is None:
        return _scene(domain, rng, h, w), None
    look, family = _LOOKS[generator], FAMILY_OF[generator]
    if family == "text-to-image":
        return images.generator_look(_scene(domain, rng, h, w), rng, look), None
    base = _scene(domain, rng, h, w)
    if family == "image-to-image":  # re-synthesized from the real image: smoother, shifted colours
        stronger = images.Look(**{**look.__dict__, "blur": look.blur + 0.5})
        return images.generator_look(base[:, :, [1, 2, 0]] // 2 + base // 2, rng, stronger), None
    if family == "inpainting":
        mask = images.blob_mask(rng, h, w)
        return images.paste(base, images.generator_look(_scene(domain, rng, h, w), rng, look), mask), mask
    if family == "deepfake":
        mask = images.face_mask(rng, h, w)
        face = images.generator_look(images.draw_face(base, mask, rng), rng, look)
        return images.paste(base, face, mask), mask
    for strength in (60, 90, 140):  # editing: change objects, regenerate, keep large changes
        edited = base.copy()
        region = images.blob_mask(rng, h, w, min_frac=0.04, max_frac=0.25)
        shift = rng.integers(-strength, strength + 1, 3)
        edited[region] = np.clip(edited[region].astype(int) + shift, 0, 255).astype(np.uint8)
        edited = images.generator_look(edited, rng, look)
        mask = images.changed_regions(base, edited, tau=40, gamma=20)
        if mask.any():
            return images.paste(base, edited, mask), mask
    mask = images.blob_mask(rng, h, w)  # edits too faint to pass the filter: inpaint instead
    return images.paste(base, images.generator_look(_scene(domain, rng, h, w), rng, look), mask), mask


def _plan(scale: str) -> list[tuple[str, str | None]]:
    real, per_gen = (45, 3) if scale == "small" else (20_000, 1_000)
    rows = []
    for domain in DOMAINS:
        rows += [(domain, None)] * real
        for g in FAMILY_OF:
            rows += [(domain, g)] * per_gen
    return rows


def generate(out: Path, *, scale: str = "small", seed: int = 0) -> Path:
    """Write the UniAIDet demo pack to ``out`` (replaced); deterministic for ``seed``."""
    if scale not in ("small", "large"):
        raise ValueError(f"scale must be 'small' or 'large', got {scale!r}")
    pack_meta = meta()
    rows = sorted((opaque_id(d, g, n, seed=seed), n, d, g) for n, (d, g) in enumerate(_plan(scale)))
    with PackWriter(Path(out), pack_meta, description=DESCRIPTION, agreement=AGREEMENT) as w:
        for item_id, n, domain, gen in rows:
            rng = np.random.default_rng([seed, n])
            h, w_ = SIZES[int(rng.integers(0, 3))] if scale == "small" else (256, 256)
            item = {"id": item_id, "task": "detection", "modality": "image", "width": w_, "height": h}
            truth = {"id": item_id, "label": "real" if gen is None else "fake", "domain": domain}
            if scale == "small":
                img, mask = render(domain, gen, rng, h, w_)
                rel, path = w.media(f"images/{item_id}.png")
                path.write_bytes(images.png_bytes(img))
                item["media"] = [rel]
            else:
                partial = gen is not None and FAMILY_OF[gen] in ("inpainting", "editing", "deepfake")
                mask = images.face_mask(rng, h, w_) if partial else None
            if gen is not None:
                truth.update(family=FAMILY_OF[gen], generator=gen)
            if mask is not None:
                truth["mask"] = encode_mask(mask)
            key = f"{domain}:{gen}:{n}"
            split = assign_split(key, seed=seed)
            if split == "test":
                truth["part"] = assign_part(key, seed=seed)
            w.add(split, item, truth)
    return Path(out)
