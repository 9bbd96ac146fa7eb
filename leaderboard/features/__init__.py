"""Features computed from a pack's media while the pack is written, shared by the demo
generators and the builders (both sit above this package; the core, below it, only reads what
it wrote). Needs the ``[builders]`` extra (OpenCV, scikit-image, Pillow).

- `vai`: VCT²'s Visual AI Index (the twelve image features and the per-subset model).
"""
