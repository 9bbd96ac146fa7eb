"""Save a tiny, randomly initialized image classifier that ``detect.py`` can load.

Usage: ``python make_tiny_model.py OUT_DIR [--seed N]``

The model is a 2-layer ViT on 32x32 inputs (patch 8, hidden 32) with the labels
``{0: "real", 1: "fake"}``, saved with its image processor config in the Hugging Face layout
(``config.json``, ``model.safetensors``, ``preprocessor_config.json``). Its weights are random:
its scores carry no signal. It exists to smoke-test the pipeline end to end (the tests, a first
``docker build``, a first submission to the dev split) in seconds and a few hundred kilobytes;
replace it with your own detector's directory before submitting for real.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

IMAGE_SIZE = 32
LABELS = {0: "real", 1: "fake"}


def make_tiny_model(out: str | Path, *, seed: int = 0) -> Path:
    """Write the tiny classifier and its processor config to ``out``; return the directory.

    Deterministic for a given ``seed`` (the weights come from ``torch.manual_seed(seed)``).
    ``out`` may exist; files of the same names in it are overwritten.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    config = ViTConfig(
        image_size=IMAGE_SIZE, patch_size=8, num_channels=3, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        id2label=dict(LABELS), label2id={v: k for k, v in LABELS.items()},
    )
    torch.manual_seed(seed)
    model = ViTForImageClassification(config).eval()
    model.save_pretrained(out)
    processor = ViTImageProcessor(
        do_resize=True, size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        do_rescale=True, do_normalize=True, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
    )
    processor.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="directory to write (e.g. ./model)")
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default 0)")
    args = parser.parse_args(argv)
    try:
        path = make_tiny_model(args.out, seed=args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote a tiny random classifier to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
