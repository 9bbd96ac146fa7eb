"""Localization masks as COCO run-length encoding: validation, encoding and IoU (UniAIDet mIoU).

The contract's mask is ``{"size": [h, w], "counts": "<compressed string>"}`` (column-major runs,
starting with a run of 0s, in pycocotools' compressed alphabet); an uncompressed ``counts`` list of
ints is also accepted. IoU is computed on the encoding with pycocotools (areas and an intersecting
merge), never by decoding to pixels.

pycocotools' C decoder trusts its input: a string cut inside a number makes it read past the
string's end, and run lengths that do not sum to h * w make it write past the mask.
``validate_rle`` (and ``validate_rles`` for many masks in one vectorized pass) therefore decodes
the string itself in numpy and checks every rule before anything reaches pycocotools.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
from pycocotools import mask as coco_mask

from leaderboard.core.errors import describe

MAX_PIXELS = 2**31 - 1
"""Largest h * w accepted: pycocotools stores run lengths and areas as 32-bit integers."""

_MAX_CHARS_PER_COUNT = 7  # 7 x 5 bits = 35 bits, enough for any count <= MAX_PIXELS


def _is_int(value) -> bool:
    # The exact-type test first: the Integral ABC check is slow and this runs per list element.
    return type(value) is int or (isinstance(value, Integral) and not isinstance(value, (bool, np.bool_)))


def _check_size(size) -> tuple[tuple[int, int] | None, str | None]:
    if not isinstance(size, (list, tuple)) or len(size) != 2 or not all(map(_is_int, size)):
        return None, f"size must be [height, width] with two integers, got {size!r:.80}"
    h, w = int(size[0]), int(size[1])
    if h <= 0 or w <= 0:
        return None, f"size must hold positive integers, got {[h, w]}"
    if h * w > MAX_PIXELS:
        return None, f"size {[h, w]} has more than {MAX_PIXELS} pixels"
    return (h, w), None


def _segmented_cumsum(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` restarting where ``segment`` (sorted ids) changes."""
    total = np.cumsum(values)
    first = np.flatnonzero(np.concatenate([[True], segment[1:] != segment[:-1]]))
    before = np.concatenate([[0], total])[first]        # the running sum before each segment
    return total - np.repeat(before, np.diff(np.append(first, values.size)))


def _check_strings(texts: list[str], n_pixels: list[int]) -> list[str | None]:
    """Check compressed counts strings against pycocotools' format, all at once in numpy.

    Decodes like rleFrString (5 bits per character from '0', continuation bit 0x20, sign bit
    0x10 on a number's last character, counts from index 3 on stored as a delta to the count two
    places before) and requires non-negative counts summing to h * w. None where valid.
    """
    errors: list[str | None] = [None] * len(texts)
    raws, keep = [], []
    for i, (text, n) in enumerate(zip(texts, n_pixels)):
        try:
            raw = text.encode("ascii")
        except UnicodeEncodeError:
            errors[i] = "counts string must be ASCII"
            continue
        if not raw:
            errors[i] = "counts string is empty"
        elif len(raw) > _MAX_CHARS_PER_COUNT * (n + 1):
            errors[i] = f"counts string is too long ({len(raw)} characters) for {n} pixels"
        else:
            raws.append(raw)
            keep.append(i)
    if not raws:
        return errors
    lens = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    string_end = np.cumsum(lens) - 1                    # index of each string's last character
    raw = np.frombuffer(b"".join(raws), dtype=np.uint8)
    bad_char = (raw < 48) | (raw > 111)
    c = raw - np.uint8(48)                              # uint8 (wraps only on bad characters)
    ends = (c & 0x20) == 0                              # no continuation bit: a number ends here
    mid_number = ~ends[string_end]
    ends[string_end] = True                             # never let a number run into the next string
    end_idx = np.flatnonzero(ends)
    starts = np.concatenate([[0], end_idx[:-1] + 1])
    lengths = end_idx - starts + 1
    numbers_upto = np.cumsum(ends, dtype=np.int64)[string_end]
    per_string = np.diff(numbers_upto, prepend=0)
    number_owner = np.repeat(np.arange(len(raws)), per_string)      # string of each number
    first_number = numbers_upto - per_string                         # every string has >= 1
    # Per-string flags are set from the (rare) offending numbers: bincount with weights over
    # every number would cost more than the whole decode.
    too_wide = np.zeros(len(raws), dtype=bool)
    too_wide[number_owner[lengths > _MAX_CHARS_PER_COUNT]] = True
    # Assemble each number from its characters, 5 bits at a time (at most 7 rounds; the widest
    # real counts take 3), instead of per-character shift arrays.
    x = (c[starts] & 0x1F).astype(np.int64)
    for k in range(1, min(int(lengths.max()), _MAX_CHARS_PER_COUNT + 1)):
        longer = np.flatnonzero(lengths > k)
        x[longer] |= (c[starts[longer] + k] & 0x1F).astype(np.int64) << (5 * k)
    negative = (c[end_idx] & 0x10) != 0                 # sign bit on a number's last character
    x = np.where(negative, x - (np.int64(1) << (5 * np.minimum(lengths, 8))), x)
    # A valid delta is within +-MAX_PIXELS; zeroing larger ones keeps the running sums below
    # from overflowing on hostile input (their strings are rejected anyway).
    out_of_range = np.abs(x) > MAX_PIXELS
    too_wide[number_owner[out_of_range]] = True
    x[out_of_range] = 0
    position = np.arange(starts.size) - first_number[number_owner]
    counts = x.copy()
    for sel in (position % 2 == 1, (position % 2 == 0) & (position >= 2)):
        counts[sel] = _segmented_cumsum(x[sel], number_owner[sel])
    has_negative = np.zeros(len(raws), dtype=bool)
    has_negative[number_owner[counts < 0]] = True
    totals = np.add.reduceat(counts, first_number)
    bad_chars = np.zeros(len(raws), dtype=bool)
    if bad_char.any():
        bad_chars[np.searchsorted(string_end, np.flatnonzero(bad_char))] = True
    expected = np.asarray(n_pixels, dtype=np.int64)[keep]
    failed = bad_chars | mid_number | too_wide | has_negative | (totals != expected)
    for j in np.flatnonzero(failed).tolist():          # messages only for the failures
        i = keep[j]
        if bad_chars[j]:
            first_bad = next(ch for ch in raws[j] if not 48 <= ch <= 111)
            errors[i] = f"counts string has a character outside '0'..'o': {chr(first_bad)!r}"
        elif mid_number[j]:
            errors[i] = "counts string ends in the middle of a number"
        elif too_wide[j]:
            errors[i] = "counts string has a run length out of range (too many characters)"
        elif has_negative[j]:
            errors[i] = "counts string decodes to a negative run length"
        elif totals[j] != n_pixels[i]:
            errors[i] = f"run lengths sum to {int(totals[j])}, expected height * width = {n_pixels[i]}"
    return errors


def _check_structure(obj, expected_size) -> tuple[str | None, int]:
    """Everything but the compressed string: (error, pixel count)."""
    if not isinstance(obj, dict):
        return f"mask must be an object with 'size' and 'counts', got {describe(obj)}", 0
    keys = set(obj)
    if keys != {"size", "counts"}:
        return f"mask must have exactly the keys 'size' and 'counts', got {sorted(map(str, keys))!r:.120}", 0
    size, err = _check_size(obj["size"])
    if err:
        return err, 0
    if expected_size is not None and list(size) != list(expected_size):
        return f"mask size {list(size)} does not match the image size [height, width] = {list(expected_size)}", 0
    n_pixels = size[0] * size[1]
    counts = obj["counts"]
    if isinstance(counts, str):
        return None, n_pixels
    if isinstance(counts, list):
        if len(counts) > n_pixels + 1:
            return f"counts list is too long ({len(counts)}) for {n_pixels} pixels", 0
        if not all(map(_is_int, counts)):
            return "counts list must hold integers", 0
        if any(v < 0 for v in counts):
            return "counts list holds a negative run length", 0
        total = sum(counts)
        if total != n_pixels:
            return f"run lengths sum to {total}, expected height * width = {n_pixels}", 0
        return None, n_pixels
    return f"counts must be a string (compressed RLE) or a list of integers, got {describe(counts)}", 0


def validate_rles(objs, *, expected_sizes=None) -> list[str | None]:
    """``validate_rle`` for many masks at once (the compressed strings are checked in one
    vectorized pass); ``expected_sizes`` is None or one [h, w] (or None) per mask."""
    objs = list(objs)
    sizes = [None] * len(objs) if expected_sizes is None else list(expected_sizes)
    if len(sizes) != len(objs):
        raise ValueError(f"expected_sizes must have one entry per mask, got {len(sizes)} for {len(objs)}")
    errors: list[str | None] = [None] * len(objs)
    strings, where, pixels = [], [], []
    for i, (obj, size) in enumerate(zip(objs, sizes)):
        try:
            errors[i], n_pixels = _check_structure(obj, size)
        except Exception as exc:  # noqa: BLE001 - the contract: a message, never an exception
            errors[i] = f"mask could not be read: {type(exc).__name__}"
            continue
        if errors[i] is None and isinstance(obj["counts"], str):
            strings.append(obj["counts"])
            where.append(i)
            pixels.append(n_pixels)
    if strings:
        try:
            found = _check_strings(strings, pixels)
        except Exception as exc:  # noqa: BLE001
            found = [f"mask could not be read: {type(exc).__name__}"] * len(strings)
        for i, err in zip(where, found):
            errors[i] = err
    return errors


def validate_rle(obj, *, expected_size=None) -> str | None:
    """An error message for a malformed contract RLE, or None when it is valid.

    Checks: a dict with exactly the keys "size" and "counts"; size = [h, w] positive integers
    (and equal to ``expected_size`` when given); counts either a compressed string that
    pycocotools' decoder reads as non-negative run lengths summing to h * w, or a list of
    non-negative integers summing to h * w. Never raises, whatever ``obj`` is.

    >>> validate_rle(encode_mask(np.ones((2, 3), dtype=bool)), expected_size=[2, 3]) is None
    True
    >>> validate_rle({"size": [2, 2], "counts": [1, 2]})
    'run lengths sum to 3, expected height * width = 4'
    """
    try:
        return validate_rles([obj], expected_sizes=[expected_size])[0]
    except Exception as exc:  # noqa: BLE001 - the contract: a message, never an exception
        return f"mask could not be read: {type(exc).__name__}"


def encode_mask(mask) -> dict:
    """Encode a 2-D bool mask (True = generated pixel) as the contract RLE with a str counts.

    >>> encode_mask(np.array([[True, False], [True, True]]))
    {'size': [2, 2], 'counts': '021O'}
    """
    arr = np.asarray(mask)
    if arr.ndim != 2 or arr.dtype != bool:
        raise ValueError(f"mask must be a 2-D bool array, got shape {arr.shape} and dtype {arr.dtype}")
    rle = coco_mask.encode(np.asfortranarray(arr, dtype=np.uint8))
    return {"size": [int(arr.shape[0]), int(arr.shape[1])], "counts": rle["counts"].decode("ascii")}


def _to_coco(obj: dict) -> dict:
    h, w = (int(v) for v in obj["size"])
    counts = obj["counts"]
    if isinstance(counts, list):
        return coco_mask.frPyObjects({"size": [h, w], "counts": counts}, h, w)
    return {"size": [h, w], "counts": counts.encode("ascii")}


_AREA_BATCH = 255


def _areas(objs: list[dict]) -> np.ndarray:
    # pycocotools 2.0.11 under numpy 2 raises OverflowError ("out of bounds for uint8") when
    # area() gets more than 255 masks at once, so the list goes in batches of 255.
    out = np.zeros(len(objs))
    for start in range(0, len(objs), _AREA_BATCH):
        out[start:start + _AREA_BATCH] = coco_mask.area(objs[start:start + _AREA_BATCH])
    return out


def rle_iou(*, gt, pred, assume_valid: bool = False) -> np.ndarray:
    """Per-item IoU = |G ∩ P| / |G ∪ P| on COCO RLE, computed without decoding (UniAIDet 4.1).

    ``gt`` and ``pred`` are equal-length sequences of contract RLE dicts; a ``pred`` of None is
    an empty predicted mask, so its IoU is 0. When both masks are empty the union is empty and
    the IoU is defined as 1.0 (the prediction agrees exactly). Every mask is checked with
    ``validate_rle`` (ValueError naming the item) unless ``assume_valid`` is True, which callers
    may pass for masks that already passed ``validate_rle`` at load time.

    >>> g = encode_mask(np.array([[True, True], [False, False]]))
    >>> p = encode_mask(np.array([[True, False], [True, False]]))
    >>> rle_iou(gt=[g, g], pred=[p, None]).tolist()
    [0.3333333333333333, 0.0]
    """
    gt, pred = list(gt), list(pred)
    if len(gt) != len(pred):
        raise ValueError(f"gt and pred must have the same length, got {len(gt)} and {len(pred)}")
    if not gt:
        return np.zeros(0)
    if not assume_valid:
        for i, err in enumerate(validate_rles(gt)):
            if err:
                raise ValueError(f"item {i}: gt: {err}")
        given = [i for i, p in enumerate(pred) if p is not None]
        found = validate_rles([pred[i] for i in given], expected_sizes=[gt[i]["size"] for i in given])
        for i, err in zip(given, found):
            if err:
                raise ValueError(f"item {i}: {err}")
    for i, (g, p) in enumerate(zip(gt, pred)):
        # pycocotools merges masks of different sizes without complaint: refuse here.
        if p is not None and list(p["size"]) != list(g["size"]):
            raise ValueError(f"item {i}: predicted mask size {list(p['size'])} differs from {list(g['size'])}")
    g_coco = [_to_coco(g) for g in gt]
    has_pred = np.array([p is not None for p in pred])
    p_coco = [_to_coco(p) for p in pred if p is not None]
    area_g = _areas(g_coco)
    area_p = np.zeros(len(gt))
    inter = np.zeros(len(gt))
    if p_coco:
        g_with = [g for g, keep in zip(g_coco, has_pred) if keep]
        area_p[has_pred] = _areas(p_coco)
        merged = [coco_mask.merge([g, p], intersect=True) for g, p in zip(g_with, p_coco)]
        inter[has_pred] = _areas(merged)
    union = area_g + area_p - inter
    return np.divide(inter, union, out=np.ones(len(gt)), where=union > 0)


def mean_iou(*, gt, pred, assume_valid: bool = False) -> float:
    """mIoU: the mean of ``rle_iou`` over items (NaN when there are none)."""
    ious = rle_iou(gt=gt, pred=pred, assume_valid=assume_valid)
    return float(ious.mean()) if ious.size else float("nan")
