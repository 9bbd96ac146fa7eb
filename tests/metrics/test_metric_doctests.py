import doctest
import importlib

import pytest

MODULES = ["leaderboard.metrics.classification", "leaderboard.metrics.ranking", "leaderboard.metrics.choice",
           "leaderboard.metrics.hallucination", "leaderboard.metrics.masks", "leaderboard.metrics.composite",
           "leaderboard.metrics.bootstrap", "leaderboard.extract"]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
