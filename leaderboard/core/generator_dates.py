"""Public release dates of generators the packs name (issue 37): the ``generators:`` table of
``benchmark.yaml`` that the demo packs and the builders write.

Each date is the day the generator (its weights, or its public service) first became available
to the public, as best known from its maker's announcement; generators whose day is not known
with confidence are left out, and a pack then shows them undated (neither seen nor unseen).
Keys are the values of the packs' hidden ``generator`` attribute.
"""
from __future__ import annotations

#: generator key -> ISO date it became public
PUBLIC_DATES = {
    # VCT² (leaderboard.core.benchmarks.vct2.GENERATORS)
    "SD 2.1": "2022-12-07",        # Stability AI, Stable Diffusion 2.1 weights
    "SDXL": "2023-07-26",          # SDXL 1.0 weights
    "SD3 Medium": "2024-06-12",    # Stable Diffusion 3 Medium weights
    "SD3.5 Large": "2024-10-22",   # Stable Diffusion 3.5 Large weights
    "DALL·E 3": "2023-10-19",      # available to ChatGPT Plus and Enterprise users
    "Midjourney 6": "2023-12-21",  # Midjourney V6 alpha
    # UniAIDet (leaderboard.core.benchmarks.uniaidet.GENERATORS)
    "SD-1.5": "2022-10-20",        # Stable Diffusion v1.5 weights (RunwayML)
    "SD2-Inpaint": "2022-11-24",   # Stable Diffusion 2.0 inpainting weights
    "SD-3": "2024-06-12",          # Stable Diffusion 3 Medium weights
    "FLUX.1-dev": "2024-08-01",    # Black Forest Labs FLUX.1 [dev] weights
    "SD-3.5-Large-Turbo": "2024-10-22",
    "SD-3.5-Medium": "2024-10-29",
    "Qwen-Image": "2025-08-04",    # Qwen-Image weights
    # LOKI demo (leaderboard.demo.loki.GENERATORS): images; papers by their arXiv day
    "flux": "2024-08-01",          # FLUX.1
    "sd-1.5": "2022-10-20",
    "sd-2.1": "2022-12-07",
    "stylegan": "2018-12-12",      # StyleGAN paper (arXiv 1812.04948)
    "ddim": "2020-10-06",          # DDIM paper (arXiv 2010.02502)
    "adm": "2021-05-11",           # "Diffusion Models Beat GANs" (arXiv 2105.05233)
    # ... and texts
    "gpt-4o": "2024-05-13",
    "claude-3.5-sonnet": "2024-06-20",
    "llama-3.1-405b": "2024-07-23",
    "mistral-large": "2024-02-26",
}


def generator_table(keys, *, modality: str) -> list[dict]:
    """The ``generators:`` rows of the ``keys`` whose date is known (in ``keys`` order)."""
    return [{"key": k, "name": k, "modality": modality, "date": PUBLIC_DATES[k]}
            for k in keys if k in PUBLIC_DATES]
