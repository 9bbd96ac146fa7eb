"""The Merkle tree against an independent RFC 6962 implementation's published test vectors.

The vectors are Certificate Transparency's reference tree (google/certificate-transparency,
``cpp/merkletree/merkle_tree_test.cc``), as carried today by transparency-dev/merkle,
``proof/verify_test.go`` (``leaves``, ``roots``, ``inclusionProofs``, ``consistencyProofs``),
copied here by hand; their inclusion vectors number leaves from 1. Beyond the vectors: every
leaf and every pair of sizes of trees up to 40 leaves against a direct recursive MTH (the RFC's
definition, written out independently of the stored-node code), and the corruptions that
transparency-dev's tests apply to each proof must all be refused.
"""
from __future__ import annotations

import hashlib

import pytest

from leaderboard.core.transparency import merkle

LEAVES = [bytes.fromhex(h) for h in ("", "00", "10", "2021", "3031", "40414243",
                                     "5051525354555657", "606162636465666768696a6b6c6d6e6f")]
ROOTS = [bytes.fromhex(h) for h in (
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")]
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
# (leaf number from 1, tree size, proof)
INCLUSION = [
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (3, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (2, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]
CONSISTENCY = [
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
    (6, 7, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
]
SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


@pytest.fixture(scope="module")
def tree():
    return merkle.Tree(merkle.leaf_hash(d) for d in LEAVES)


def test_roots_match_the_reference(tree):
    assert merkle.EMPTY_ROOT.hex() == EMPTY == tree.root(0).hex()
    for n in range(1, 9):
        assert tree.root(n) == ROOTS[n - 1], n


@pytest.mark.parametrize("leaf,size,proof", INCLUSION)
def test_inclusion_proofs_match_the_reference(tree, leaf, size, proof):
    proof = [bytes.fromhex(h) for h in proof]
    assert tree.inclusion_proof(leaf - 1, size) == proof
    leaf_hash = merkle.leaf_hash(LEAVES[leaf - 1])
    merkle.verify_inclusion(leaf - 1, size, leaf_hash, proof, ROOTS[size - 1])
    # transparency-dev's corruptions: each must be refused
    bad = [(leaf - 2, size, leaf_hash, proof), (leaf, size, leaf_hash, proof),
           ((leaf - 1) ^ 2, size, leaf_hash, proof), (leaf - 1, size * 2, leaf_hash, proof),
           (leaf - 1, size // 2, leaf_hash, proof),
           (leaf - 1, size, merkle.leaf_hash(b"WrongLeaf"), proof),
           (leaf - 1, size, leaf_hash, proof + [b""]),
           (leaf - 1, size, leaf_hash, proof + [ROOTS[size - 1]]),
           (leaf - 1, size, leaf_hash, [ROOTS[size - 1]] + proof),
           (leaf - 1, size, leaf_hash, proof[:-1])]
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        bad.append((leaf - 1, size, leaf_hash, flipped))
    if len(proof) > 1:
        bad.append((leaf - 1, size, leaf_hash, [proof[0], SOME_HASH] + proof[1:]))
    for index, sz, lh, p in bad:
        for root in (ROOTS[size - 1], merkle.EMPTY_ROOT, SOME_HASH):
            with pytest.raises(merkle.ProofError):
                merkle.verify_inclusion(index, sz, lh, p, root)


@pytest.mark.parametrize("first,second,proof", CONSISTENCY)
def test_consistency_proofs_match_the_reference(tree, first, second, proof):
    proof = [bytes.fromhex(h) for h in proof]
    assert tree.consistency_proof(first, second) == proof
    r1, r2 = ROOTS[first - 1], ROOTS[second - 1]
    merkle.verify_consistency(first, second, r1, r2, proof)
    bad = [(first - 1, second, r1, r2, proof), (first + 1, second, r1, r2, proof),
           (first ^ 2, second, r1, r2, proof), (first, second * 2, r1, r2, proof),
           (first, second // 2, r1, r2, proof), (first, second, SOME_HASH, r2, proof),
           (first, second, r1, SOME_HASH, proof), (first, second, r2, r1, proof),
           (first, second, r1, r2, []), (first, second, r1, r2, proof + [r1]),
           (first, second, r1, r2, [r2] + proof), (first, second, r1, r2, proof[:-1])]
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        bad.append((first, second, r1, r2, flipped))
    for args in bad:
        with pytest.raises(merkle.ProofError):
            merkle.verify_consistency(*args)


def _mth(data: list[bytes]) -> bytes:
    """RFC 6962 section 2.1's definition, recursively (independent of the stored nodes)."""
    if not data:
        return hashlib.sha256(b"").digest()
    if len(data) == 1:
        return hashlib.sha256(b"\x00" + data[0]).digest()
    k = 1
    while k * 2 < len(data):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(data[:k]) + _mth(data[k:])).digest()


def test_every_proof_of_small_trees_verifies():
    data = [bytes([i, i * 7 % 256]) for i in range(40)]
    tree = merkle.Tree(merkle.leaf_hash(d) for d in data)
    running = merkle.RunningRoot()
    for n in range(1, len(data) + 1):
        running.append(merkle.leaf_hash(data[n - 1]))
        root = _mth(data[:n])
        assert tree.root(n) == root == running.root()
        for i in range(n):
            merkle.verify_inclusion(i, n, merkle.leaf_hash(data[i]), tree.inclusion_proof(i, n),
                                    root)
        for m in range(n + 1):
            merkle.verify_consistency(m, n, _mth(data[:m]), root, tree.consistency_proof(m, n))


def test_a_rewritten_history_fails_consistency():
    data = [bytes([i]) for i in range(11)]
    honest = merkle.Tree(merkle.leaf_hash(d) for d in data)
    forged = merkle.Tree(merkle.leaf_hash(d) for d in data[:3] + [b"x"] + data[4:])
    with pytest.raises(merkle.ProofError, match="root of the tree of 7"):
        merkle.verify_consistency(7, 11, honest.root(7), forged.root(11),
                                  forged.consistency_proof(7, 11))


def test_proofs_read_logarithmically_many_nodes():
    asked = []
    tree = merkle.Tree(merkle.leaf_hash(i.to_bytes(4, "big")) for i in range(1000))

    def get(keys):
        asked.append(len(keys))
        return tree.get(keys)

    merkle.prove(merkle.inclusion_ranges(517, 1000), get)
    merkle.prove(merkle.consistency_ranges(333, 1000), get)
    assert max(asked) <= 2 * 10 and len(asked) == 2
