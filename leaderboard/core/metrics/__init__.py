"""Pure numpy metric functions (no Flask, no database): one module per family.

classification (hard decisions), ranking (scores; SynCred TPR@FPR), choice (TriDF MCQ),
hallucination (TriDF Cover/CHAIR/Hal/F0.5), masks (COCO RLE IoU and validation), composite
(TriDF TCS), bootstrap (95% CIs) and registry (``METRICS``: every metric with its direction).
"""
