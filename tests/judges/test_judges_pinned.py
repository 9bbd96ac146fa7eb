"""Every supported version of the rules mapping reproduces its pinned output on the whole
evaluation set (`judge_eval/pinned_rules.jsonl`, recorded before `rules@2`'s copy of the code was
merged into the one engine): the mapping with the modality's candidates and the clauses the
MiniLM judges embed. Plus the versions-as-data machinery itself."""
import pytest

from judge_eval import pinned
from leaderboard.judges import get_judge
from leaderboard.judges.mapping import engine_for
from leaderboard.judges.mapping.versions import FEATURES, SUPPORTED, Version, since, until, version


def test_every_supported_version_is_pinned():
    rows = pinned.load_pinned()
    assert set(SUPPORTED) <= {f.removeprefix("rules@") for f in next(iter(rows.values()))
                               if f.startswith("rules@")}


@pytest.mark.parametrize("number", SUPPORTED)
def test_pinned_outputs_are_reproduced(number):
    rows = pinned.load_rows()
    problems = pinned.check(rows, pinned.load_pinned(), versions=(number,))
    assert not problems, "\n".join(problems[:20])
    assert len(rows) >= 1697


def test_an_edited_row_is_reported_not_repinned():
    row = dict(pinned.load_rows()[0])
    row["response"] += " The hands have six fingers."
    problems = pinned.check([row], pinned.load_pinned())
    assert problems == [f"{row['id']}: the row's text changed since it was pinned"]


def test_judges_use_their_version_of_the_engine():
    text = "Hiss (no issue)"
    assert get_judge("rules@2").map_artifacts([text], candidates=["hiss"]) == [{"hiss"}]
    assert get_judge("rules").map_artifacts([text], candidates=["hiss"]) == [set()]
    assert engine_for(2) is engine_for("2")


def test_versioned_fragments_resolve_per_version():
    pattern = r"a" + since(3, r"|b") + until(3, r"|c") + r"|d"
    assert Version(2).resolve(pattern) == "a|c|d"
    assert Version(3).resolve(pattern) == "a|b|d"
    assert Version(3).has("nothing_found") and not Version(2).has("nothing_found")
    assert set(FEATURES.values()) <= {int(v) for v in SUPPORTED}


def test_unsupported_version_is_named():
    with pytest.raises(ValueError, match=r"unsupported mapping version '9'.*\('2', '3'\)"):
        version("9")
