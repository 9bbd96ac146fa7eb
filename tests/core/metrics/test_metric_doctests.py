import doctest
import importlib

import pytest

MODULES = ["leaderboard.core.metrics.classification", "leaderboard.core.metrics.ranking", "leaderboard.core.metrics.choice",
           "leaderboard.core.metrics.hallucination", "leaderboard.core.metrics.masks", "leaderboard.core.metrics.composite",
           "leaderboard.core.metrics.bootstrap", "leaderboard.core.extract",
           "leaderboard.core.metrics.calibration", "leaderboard.core.metrics.confusion"]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
