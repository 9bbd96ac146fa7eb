"""Pinned extraction rules (../shared/specs/benchmarks.md): each tricky string and its answer."""
import pytest

from leaderboard.core import extract as X


@pytest.mark.parametrize("text, expected", [
    ("yes", "yes"), ("No", "no"), ("YES.", "yes"), ("  no.  ", "no"),
    ("y", "yes"), ("N.", "no"),
    ("Yes, the image is AI-generated.", "yes"),
    ("No, this looks real", "no"),
    ("yes no", "yes"),                    # "yes" is checked first
    ("no yes", "no"),                     # "yes" is not within the first 4 characters
    ("Not sure", "no"),                   # the authors' rule: "no" inside "not" counts
    ("I think yes", None),                # "yes" beyond the first 4 characters
    ("Maybe", None), ("", None), ("   ", None),
    ("nyes", "yes"),                      # "yes" within the first 4 characters wins
    ("y.e.s", "yes"),                     # periods are dropped first
    (None, None), (42, None),
])
def test_loki_yes_no(text, expected):
    assert X.loki_yes_no(text) == expected


OPTS = {"A": "The first image", "B": "The second image"}


# Expectations are what the authors' parse_multi_choice_response returns (see
# tests/conformance/test_loki_parsers.py for the full table and its provenance); NOT_AN_OPTION is
# their option-text answer, None their random fallback.
@pytest.mark.parametrize("text, expected", [
    ("(A)", "A"), ("**B**", "B"), ("B.", "B"), ("A is the AI-generated one", "A"),
    ("A", "A"), (" B \n", "B"),                            # a bare letter
    ("(A) looks real, so the answer is (B)", "B"),         # several: the last one mentioned
    ("**B** ... on reflection A.", "B"),                   # "**B**" outranks the later "A"
    ("The answer is (C)", None),                           # not an option
    ("Answer: B", "B"),                                    # "B " (padded) anywhere counts
    ("The second image is generated.", X.NOT_AN_OPTION),   # option text: their answer is the text
    ("the first image, not the second image", "B"),        # >5 words: last option text, lower-cased
    ("USA.", "A"),                                         # "A" + padding space inside a word
    ("a.", None),                                          # lower-case letters are not markers
    ("", None),
])
def test_loki_choice(text, expected):
    assert X.loki_choice(text, OPTS) == expected


def test_loki_choice_rejects_bad_options():
    with pytest.raises(ValueError, match="options"):
        X.loki_choice("A", {})
