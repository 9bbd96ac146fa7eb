import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pycocotools import mask as coco_mask

from leaderboard.core.metrics import masks

shapes = st.tuples(st.integers(1, 12), st.integers(1, 12))


def coco_decode(obj):
    # pycocotools' decode trips numpy 2's __array__(copy=...) deprecation; only tests decode.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message="__array__ implementation")
        return coco_mask.decode(obj)


def decode(rle):
    return coco_decode({"size": rle["size"], "counts": rle["counts"].encode()}).astype(bool)


@settings(max_examples=150, deadline=None)
@given(shapes.flatmap(lambda s: st.tuples(hnp.arrays(bool, s), hnp.arrays(bool, s))))
def test_iou_matches_decoded_pixels(pair):
    g, p = pair
    rg, rp = masks.encode_mask(g), masks.encode_mask(p)
    assert masks.validate_rle(rg, expected_size=list(g.shape)) is None
    assert (decode(rg) == g).all()
    union = (g | p).sum()
    expected = 1.0 if union == 0 else (g & p).sum() / union
    got = masks.rle_iou(gt=[rg], pred=[rp])
    assert got.tolist() == [pytest.approx(expected)]
    # pycocotools' own IoU (iscrowd 0) agrees wherever the union is non-empty
    if union:
        ref = coco_mask.iou([{"size": rp["size"], "counts": rp["counts"].encode()}],
                            [{"size": rg["size"], "counts": rg["counts"].encode()}], [0])
        assert got[0] == pytest.approx(ref[0, 0])


def test_pinned_iou_and_choices():
    g = masks.encode_mask(np.array([[1, 1], [0, 0]], bool))
    p = masks.encode_mask(np.array([[1, 0], [1, 0]], bool))
    empty = masks.encode_mask(np.zeros((2, 2), bool))
    got = masks.rle_iou(gt=[g, g, empty, g], pred=[p, None, empty, g])
    assert got.tolist() == [pytest.approx(1 / 3), 0.0, 1.0, 1.0]   # None = empty; both empty = 1
    assert masks.mean_iou(gt=[g, g], pred=[p, None]) == pytest.approx(1 / 6)
    assert masks.rle_iou(gt=[], pred=[]).size == 0


def test_uncompressed_counts_accepted():
    g = masks.encode_mask(np.array([[1, 1], [0, 0]], bool))
    # column-major runs: [[1, 0], [1, 0]] = 0 zeros, 2 ones, 2 zeros
    assert masks.validate_rle({"size": [2, 2], "counts": [0, 2, 2]}) is None
    assert masks.rle_iou(gt=[g], pred=[{"size": [2, 2], "counts": [0, 2, 2]}]).tolist() == [pytest.approx(1 / 3)]


def test_rle_iou_rejects_bad_items_by_index():
    g = masks.encode_mask(np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="item 1: .*does not match"):
        masks.rle_iou(gt=[g, g], pred=[g, masks.encode_mask(np.ones((3, 2), bool))])
    with pytest.raises(ValueError, match="item 0: .*differs"):
        masks.rle_iou(gt=[g], pred=[masks.encode_mask(np.ones((3, 2), bool))], assume_valid=True)
    with pytest.raises(ValueError, match="same length"):
        masks.rle_iou(gt=[g], pred=[])


@pytest.mark.parametrize("obj, message", [
    (None, "must be an object"),
    ("0", "must be an object"),
    ({"size": [2, 2]}, "exactly the keys"),
    ({"size": [2, 2], "counts": "4", "extra": 1}, "exactly the keys"),
    ({"size": [2], "counts": "4"}, "size must be"),
    ({"size": [2.0, 2], "counts": "4"}, "size must be"),
    ({"size": [True, 2], "counts": "4"}, "size must be"),
    ({"size": [0, 2], "counts": ""}, "positive"),
    ({"size": [-2, -2], "counts": "4"}, "positive"),
    ({"size": [2**20, 2**20], "counts": "4"}, "more than"),
    ({"size": "2x2", "counts": "4"}, "size must be"),
    ({"size": [2, 2], "counts": ""}, "empty"),
    ({"size": [2, 2], "counts": "3"}, "sum to 3"),
    ({"size": [2, 2], "counts": "5"}, "sum to 5"),
    ({"size": [2, 2], "counts": "0`"}, "middle of a number"),
    ({"size": [2, 2], "counts": "4\x00"}, "outside"),
    ({"size": [2, 2], "counts": "4 "}, "outside"),
    ({"size": [2, 2], "counts": "4p"}, "outside"),
    ({"size": [2, 2], "counts": "é"}, "ASCII"),
    ({"size": [2, 2], "counts": "O5"}, "negative"),                 # first count -1
    ({"size": [2, 2], "counts": "oooooooo0"}, "out of range"),
    ({"size": [2, 2], "counts": "4" * 100}, "too long"),
    ({"size": [2, 2], "counts": [1, 2]}, "sum to 3"),
    ({"size": [2, 2], "counts": [5, -1]}, "negative"),
    ({"size": [2, 2], "counts": [1.5, 2.5]}, "integers"),
    ({"size": [2, 2], "counts": [True, 3]}, "integers"),
    ({"size": [2, 2], "counts": 4}, "counts must be"),
    ({"size": [2, 2], "counts": b"4"}, "counts must be"),
])
def test_validate_rle_messages(obj, message):
    err = masks.validate_rle(obj)
    assert err is not None and message in err


def test_validate_rle_expected_size():
    rle = masks.encode_mask(np.ones((3, 4), bool))
    assert masks.validate_rle(rle, expected_size=[3, 4]) is None
    assert "does not match" in masks.validate_rle(rle, expected_size=[4, 3])


@settings(max_examples=400, deadline=None)
@given(st.tuples(st.integers(1, 6), st.integers(1, 6)),
       st.text(alphabet=st.characters(min_codepoint=40, max_codepoint=115), max_size=20))
def test_hostile_strings_never_crash_and_valid_ones_decode(size, counts):
    obj = {"size": list(size), "counts": counts}
    err = masks.validate_rle(obj)
    assert err is None or isinstance(err, str)
    if err is None:
        # Whatever validate_rle accepts, pycocotools decodes to the declared size, and the
        # decoded pixels re-encode to the same run lengths.
        pixels = coco_decode({"size": list(size), "counts": counts.encode()})
        assert pixels.shape == size
        assert coco_mask.area({"size": list(size), "counts": counts.encode()}) == pixels.sum()


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                    max_leaves=8))
def test_arbitrary_json_never_raises(obj):
    assert masks.validate_rle(obj) is not None or isinstance(obj, dict)


def test_encode_mask_validation():
    with pytest.raises(ValueError, match="2-D bool"):
        masks.encode_mask(np.ones((2, 2), dtype=np.uint8))


def reference_counts(text):
    """Plain transcription of pycocotools' rleFrString, for strings of complete numbers."""
    counts, p = [], 0
    while p < len(text):
        x, k, more = 0, 0, True
        while more:
            c = ord(text[p]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0x20, 0x3F), max_size=2), st.integers(0, 0x1F)),
                min_size=1, max_size=12))
def test_decoder_agrees_with_reference(numbers):
    # Build strings of complete numbers (continuation chars then one final char).
    text = "".join("".join(chr(48 + c) for c in cont) + chr(48 + last) for cont, last in numbers)
    counts = reference_counts(text)
    total = sum(counts)
    valid = min(counts) >= 0 and total > 0
    err = masks.validate_rle({"size": [1, max(total, 1)], "counts": text})
    assert (err is None) == valid, (text, counts, err)
    if valid:
        assert coco_decode({"size": [1, total], "counts": text.encode()}).sum() == sum(counts[1::2])


def test_many_masks_beyond_pycocotools_batch_limit():
    # pycocotools' area() fails on more than 255 masks at once under numpy 2; rle_iou batches.
    rng = np.random.default_rng(7)
    gt_px = rng.random((600, 4, 5)) < 0.5
    pred_px = rng.random((600, 4, 5)) < 0.5
    got = masks.rle_iou(gt=[masks.encode_mask(m) for m in gt_px], pred=[masks.encode_mask(m) for m in pred_px])
    inter = (gt_px & pred_px).sum(axis=(1, 2))
    union = (gt_px | pred_px).sum(axis=(1, 2))
    np.testing.assert_allclose(got, np.where(union > 0, inter / np.maximum(union, 1), 1.0))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.tuples(st.integers(1, 4), st.integers(1, 4)),
                          st.text(alphabet=st.characters(min_codepoint=44, max_codepoint=113), max_size=8)),
                max_size=6))
def test_batch_validation_equals_one_by_one(items):
    # A string cut mid-number must not run into the next string of the batch.
    objs = [{"size": list(size), "counts": text} for size, text in items]
    good = masks.encode_mask(np.eye(3, dtype=bool))
    objs = [x for obj in objs for x in (obj, good)]
    assert masks.validate_rles(objs) == [masks.validate_rle(obj) for obj in objs]


def test_batch_validation_sizes_and_messages():
    a = masks.encode_mask(np.ones((2, 3), bool))
    errs = masks.validate_rles([a, None, a, {"size": [2, 3], "counts": "0`"}], expected_sizes=[[2, 3], None, [3, 2], None])
    assert errs[0] is None and "must be an object" in errs[1] and "does not match" in errs[2]
    assert "middle of a number" in errs[3]
    with pytest.raises(ValueError, match="one entry per mask"):
        masks.validate_rles([a], expected_sizes=[])
