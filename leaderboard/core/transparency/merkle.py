"""RFC 6962 Merkle trees (the hashing of RFC 9162 section 2.1): roots, proofs, verification.

* leaf hash ``SHA-256(0x00 || data)``; interior node ``SHA-256(0x01 || left || right)``; the
  empty tree's root is ``SHA-256("")``. A tree of n leaves splits at k, the largest power of two
  below n: ``MTH(D[0:n]) = node(MTH(D[0:k]), MTH(D[k:n]))``.
* Storage (the server's and the in-memory `Tree`): only **perfect** subtrees are stored, node
  ``(level, index)`` being the root of leaves ``[index * 2**level, (index + 1) * 2**level)``. A
  log of n leaves has fewer than 2n of them, each written once, when its last leaf arrives. Any
  subtree a proof needs is a run of at most log2(n) perfect ones (`perfect_nodes`), so a proof
  reads O(log n) stored hashes in one lookup (`inclusion_ranges` / `consistency_ranges` say
  which subtrees, `prove` fetches and folds them).
* Verification follows RFC 9162 sections 2.1.3.2 and 2.1.4.2 step by step; it raises
  `ProofError` with the reason. tests/transparency/test_merkle.py pins the Certificate
  Transparency reference vectors (roots, inclusion and consistency proofs).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()
#: storage key of node (level, index): level in the high bits (2**40 leaves at most)
_INDEX_BITS = 40


class ProofError(ValueError):
    """A proof that does not verify (or cannot be a proof for these sizes)."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def node_key(level: int, index: int) -> int:
    """The integer the server stores node (level, index) under."""
    return (level << _INDEX_BITS) | index


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def perfect_nodes(start: int, end: int) -> list[tuple[int, int]]:
    """The perfect subtrees, largest first, that make up leaves ``[start, end)`` as RFC 6962
    splits them (``start`` a multiple of the largest: true of every range a proof asks for)."""
    out = []
    while start < end:
        size = 1 << ((end - start).bit_length() - 1)
        while start % size:
            size >>= 1
        level = size.bit_length() - 1
        out.append((level, start >> level))
        start += size
    return out


def fold(hashes: Sequence[bytes]) -> bytes:
    """The root of consecutive perfect subtrees, largest first (RFC 6962's right fold)."""
    if not hashes:
        return EMPTY_ROOT
    h = hashes[-1]
    for left in reversed(hashes[:-1]):
        h = node_hash(left, h)
    return h


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The subtrees (leaf ranges) whose roots make the audit path of leaf ``index`` in a tree of
    ``size`` leaves, in proof order (RFC 9162 2.1.3.1 PATH: the leaf's sibling first)."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not in a tree of {size} leaves")
    out, lo, hi = [], 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            out.append((lo + k, hi))
            hi = lo + k
        else:
            out.append((lo, lo + k))
            lo += k
    return out[::-1]


def consistency_ranges(first: int, second: int) -> list[tuple[int, int]]:
    """The subtrees of a consistency proof from size ``first`` to ``second`` (RFC 9162 2.1.4.1
    SUBPROOF), in proof order; empty when ``first`` is 0 or equals ``second``."""
    if not 0 <= first <= second:
        raise ProofError(f"no consistency proof from size {first} to size {second}")
    if first in (0, second):
        return []
    out, lo, hi, m, whole = [], 0, second, first, True
    while True:
        if m == hi - lo:
            if not whole:
                out.append((lo, hi))
            break
        k = _split(hi - lo)
        if m <= k:
            out.append((lo + k, hi))
            hi = lo + k
        else:
            out.append((lo, lo + k))
            lo, m, whole = lo + k, m - k, False
    return out[::-1]


NodeGetter = Callable[[set[tuple[int, int]]], dict[tuple[int, int], bytes]]


def prove(ranges: Iterable[tuple[int, int]], get: NodeGetter) -> list[bytes]:
    """The root of each range, from the perfect nodes ``get`` returns for the keys it is asked
    (one call: the server answers it with one query). KeyError names a node ``get`` lacks."""
    ranges = list(ranges)
    wanted = {p for r in ranges for p in perfect_nodes(*r)}
    found = get(wanted) if wanted else {}
    out = []
    for r in ranges:
        pieces = perfect_nodes(*r)
        missing = [p for p in pieces if p not in found]
        if missing:
            raise KeyError(f"the tree has no stored node {missing[0]}")
        out.append(fold([found[p] for p in pieces]))
    return out


def root(size: int, get: NodeGetter) -> bytes:
    """MTH of the first ``size`` leaves."""
    return prove([(0, size)], get)[0] if size else EMPTY_ROOT


# -- verification (RFC 9162 2.1.3.2 and 2.1.4.2) ------------------------------------------------
def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """The root that ``proof`` yields for ``leaf`` at ``index`` in a tree of ``size`` leaves."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not in a tree of {size} leaves")
    _check_hashes([leaf, *proof])
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofError("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is shorter than the tree is deep")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes],
                     expected_root: bytes) -> None:
    """Raise ProofError unless ``proof`` shows ``leaf`` at ``index`` under ``expected_root``."""
    if root_from_inclusion(index, size, leaf, proof) != expected_root:
        raise ProofError(f"the inclusion proof of entry {index} does not lead to the root of "
                         f"the tree of {size} entries")


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes,
                       proof: Sequence[bytes]) -> None:
    """Raise ProofError unless the tree of ``second`` leaves (``second_root``) extends the tree
    of ``first`` leaves (``first_root``) by appending only."""
    _check_hashes(list(proof))
    if first > second:
        raise ProofError(f"a tree of {second} entries cannot extend one of {first}")
    if first == second:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if first_root != second_root:
            raise ProofError(f"two different roots for the same size {first}")
        return
    if first == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        return
    if not proof:
        raise ProofError(f"an empty consistency proof from size {first} to {second}")
    path = list(proof)
    if first & (first - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is shorter than the tree is deep")
    if fr != first_root:
        raise ProofError(f"the proof does not lead to the root of the tree of {first} entries")
    if sr != second_root:
        raise ProofError(f"the proof does not lead to the root of the tree of {second} entries")


def _check_hashes(hashes: Sequence[bytes]) -> None:
    for h in hashes:
        if not isinstance(h, bytes | bytearray) or len(h) != 32:
            raise ProofError("every hash in a proof is 32 bytes")


# -- in memory -----------------------------------------------------------------------------------
class Tree:
    """An append-only tree in memory, stored as the server stores it (perfect nodes only)."""

    def __init__(self, leaves: Iterable[bytes] = ()):
        self.levels: list[list[bytes]] = [[]]
        for h in leaves:
            self.append(h)

    def __len__(self) -> int:
        return len(self.levels[0])

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add a leaf hash; returns the nodes it completed, (level, index, hash), leaf first."""
        index = len(self.levels[0])
        self.levels[0].append(leaf)
        made, level, h = [(0, index, leaf)], 0, leaf
        while index & 1:
            h = node_hash(self.levels[level][index - 1], h)
            level, index = level + 1, index >> 1
            if len(self.levels) == level:
                self.levels.append([])
            self.levels[level].append(h)
            made.append((level, index, h))
        return made

    def get(self, keys: set[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        return {(lv, i): self.levels[lv][i] for lv, i in keys
                if lv < len(self.levels) and i < len(self.levels[lv])}

    def root(self, size: int | None = None) -> bytes:
        return root(len(self) if size is None else size, self.get)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        return prove(inclusion_ranges(index, len(self) if size is None else size), self.get)

    def consistency_proof(self, first: int, second: int | None = None) -> list[bytes]:
        return prove(consistency_ranges(first, len(self) if second is None else second),
                     self.get)


class RunningRoot:
    """The root after each appended leaf in O(log n) memory (an auditor's walk over the log)."""

    def __init__(self):
        self.size = 0
        self._stack: list[tuple[int, bytes]] = []  # (level, hash), largest first

    def append(self, leaf: bytes) -> None:
        level, h = 0, leaf
        while self._stack and self._stack[-1][0] == level:
            h = node_hash(self._stack.pop()[1], h)
            level += 1
        self._stack.append((level, h))
        self.size += 1

    def root(self) -> bytes:
        return fold([h for _lv, h in self._stack])
