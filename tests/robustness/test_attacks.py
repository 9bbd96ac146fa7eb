"""The two attacks on a robustness run (issue 36, item 1), with the real Docker engine: a
container that orders the files of its ``/input`` by inode, timestamps, directory order, name and
row order to name each item's condition does no better than chance, and one that groups
near-duplicate copies with a perfect oracle (every possible copy of every item of the split
baked in) finds no two copies of one item in a run.

One image does both (busybox, FROM scratch). It writes, per item, a score whose digits are its
guesses: ``0.ABCDEFG`` with A inode order, B modification-then-change time, C directory order,
D ``items.jsonl`` row order, E name order, F size order (a guess of the condition 1-4 from the
item's place in that order, as the attack on the hard-linked input did), and G the oracle's
verdict (1: an item seen first, 2: a copy of an item already seen, 0: unknown). The host reads
the guesses back from the per-condition prediction files, which carry the original ids.

Size order is collected but not bounded: a file's size is its content (a JPEG at quality 10 is
small), which shows its degradation whatever the metadata; docs/robustness.md says why knowing
it does not help.
"""
from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import docker.errors
import pytest
from sqlalchemy import select

from leaderboard.builders.copies import _item_seed, plan_copies
from leaderboard.builders.degrade import apply
from leaderboard.core.packs import load_pack
from leaderboard.core.robustness.layout import condition_split, read_manifest
from leaderboard.server.jobs.robustness_run import runs_dir
from leaderboard.server.models import Submission
from leaderboard.server.models.robustness import RobustnessBuild, RobustnessRun
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.benchmarks import get_benchmark, import_pack
from tests.robustness.conftest import set_plan
from tests.harness.images.build import BUSYBOX, DOCKERFILE, save_image
from tests.robustness.test_runs import _submit, app_config, docker_client  # noqa: F401
from tests.server.conftest import app, auth, client, session, sqlite_url  # noqa: F401

pytestmark = pytest.mark.docker

#: 4 conditions x 22 items: 88 of the demo dev split's 92 images, each in one condition
PLAN = {"items_per_condition": 22, "seed": 0,
        "suites": {"image": {"degradations": ["jpeg", "blur"], "levels": [1, 5]}}}
N_COND = 4
#: a chance-level guesser exceeds this bound with probability below 1e-4 (binomial tail)
TAIL = 1e-4

ATTACK = r"""set -e
cd /input
C=4
N=$(wc -l < items.jsonl)
find media -type f -exec stat -c '%i %Y %Z %s %n' {} + > /tmp/st
rank() { awk -v n="$N" -v c="$C" '{print $NF, int((NR-1)*c/n)+1}'; }
sort -s -n -k1,1 /tmp/st | rank > /tmp/g1
sort -s -n -k2,2 -k3,3 /tmp/st | rank > /tmp/g2
find media -type f | rank > /tmp/g3
sed -n 's/.*"media": *\["\([^"]*\)".*/\1/p' items.jsonl | rank > /tmp/g4
find media -type f | sort | rank > /tmp/g5
sort -s -n -k4,4 /tmp/st | rank > /tmp/g6
find media -type f -exec sha256sum {} + > /tmp/sums
awk '
  FILENAME == "/table.txt" { base[$1] = $2; next }
  FILENAME == "/tmp/sums" { of[$2] = ($1 in base) ? base[$1] : ""; next }
  FILENAME ~ /^\/tmp\/g/ { k = substr(FILENAME, 7); g[k, $1] = $2; next }
  {
    id = $0; sub(/.*"id": *"/, "", id); sub(/".*/, "", id)
    m = $0; sub(/.*"media": *\["/, "", m); sub(/".*/, "", m)
    b = of[m]; v = 0
    if (b != "") { v = (b in seen) ? 2 : 1; seen[b] = 1 }
    printf "{\"id\": \"%s\", \"score\": 0.%d%d%d%d%d%d%d}\n", id, g[1, m], g[2, m], g[3, m], \
      g[4, m], g[5, m], g[6, m], v
  }' /table.txt /tmp/sums /tmp/g1 /tmp/g2 /tmp/g3 /tmp/g4 /tmp/g5 /tmp/g6 items.jsonl \
  > /output/predictions.jsonl
"""


def oracle_table(pack_dir: Path) -> str:
    """sha256 of every copy the copies could hold of every dev image (clean and each of the
    plan's conditions, the build's own seeds) -> the item's id: a perfect near-duplicate
    detector, far beyond a perceptual hash."""
    plan = plan_copies(pack_dir, "dev")
    pack, items = plan.pack, plan.pack.items("dev")
    lines = []
    for i in range(len(items)):
        item = str(items.ids[i])
        for rel in items.value("media", i) or ():
            data = (pack.root / rel).read_bytes()
            lines.append(f"{hashlib.sha256(data).hexdigest()} {item}")
            for cond in plan.conditions:
                mp = next(p for p in plan.config.plans if p.modality == cond.modality)
                deg = mp.suite.degradation(cond.degradation)
                blob = apply(cond.modality, cond.degradation, deg.level(cond.level), data,
                             seed=_item_seed(plan.config.seed, item, cond),
                             suffix=Path(rel).suffix)
                lines.append(f"{hashlib.sha256(blob).hexdigest()} {item}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def attacker(docker_client, base_packs, tmp_path_factory):  # noqa: F811
    """(the pack with `PLAN`, the attacker's ``docker save`` tarball, oracle table baked in)."""
    tmp = tmp_path_factory.mktemp("robust-attack")
    pack = tmp / "syncred"
    shutil.copytree(base_packs["syncred"], pack)
    set_plan(pack, PLAN)
    ctx = tmp / "ctx"
    ctx.mkdir()
    shutil.copy2(BUSYBOX, ctx / "busybox")
    (ctx / "entry.sh").write_text(ATTACK)
    (ctx / "table.txt").write_text(oracle_table(pack))
    (ctx / "Dockerfile").write_text(DOCKERFILE.format(extra="COPY table.txt /table.txt"))
    image, _ = docker_client.images.build(path=str(ctx), tag="lb-robust-test:attacker",
                                          network_mode="none", rm=True, forcerm=True)
    try:  # runs load the image from the upload, as in production
        return pack, save_image(docker_client, image.id, tmp / "attacker.tar")
    finally:
        try:
            docker_client.images.remove(image.id, force=True)
        except docker.errors.APIError:
            pass


def binomial_bound(n: int, p: float, tail: float) -> int:
    """The smallest k with P(X >= k) <= tail for X ~ Binomial(n, p)."""
    for k in range(n + 1):
        if sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)) <= tail:
            return k
    return n + 1


def test_a_container_cannot_tell_conditions_or_group_copies(  # noqa: F811
        app, client, auth, session, attacker):  # noqa: F811
    from leaderboard.server.jobs.robustness import enqueue_build

    pack, tarball = attacker
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, pack, data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        with app.extensions["lb_db"].scope() as s:
            build_id = svc.request_build(s, get_benchmark(s, "syncred"), "dev").id
        enqueue_build(build_id)
    build = session.scalar(select(RobustnessBuild))
    assert build.status == "ready", build.error
    manifest = read_manifest(Path(app.config["DATA_DIR"]) / build.path)
    assert len(manifest["rounds"]) == 1  # 88 items: one invocation, each item once
    order = {c["split"]: k + 1 for k, c in enumerate(manifest["conditions"])}

    sid = _submit(client, auth.member(), tarball, "attacker")
    session.expire_all()
    assert session.get(Submission, sid).status == "scored"
    run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == sid))
    assert run.status == "scored", (run.reason, run.notes_json)
    guesses = []  # (true condition, digits)
    folder = runs_dir(app.config["DATA_DIR"], sid)
    for split, truth in order.items():
        for line in (folder / f"{split}.jsonl").read_text().splitlines():
            guesses.append((truth, f"{json.loads(line)['score']:.7f}"[2:]))
    n = len(guesses)
    assert n == N_COND * 22
    bound = binomial_bound(n, 1 / N_COND, TAIL)
    names = ["inode", "mtime/ctime", "directory order", "row order", "name order"]
    hits = {name: sum(int(d[k]) == t for t, d in guesses) for k, name in enumerate(names)}
    # chance is n/4 = 22 right; a guesser at chance passes the bound in fewer than 1 in 10^4
    # runs (for the hard-linked input of issue 36, inode and mtime order named all 88)
    for name, right in hits.items():
        assert right < bound, f"{name} order named {right} of {n} conditions (bound {bound})"
    # the oracle recognised every item as a copy of a dev item, and never a second copy
    verdicts = [d[6] for _, d in guesses]
    assert verdicts.count("0") == 0, "the oracle did not recognise every copy"
    assert verdicts.count("2") == 0, "two copies of one item were in the same run"
    assert verdicts.count("1") == n
    clean_ids = set(load_pack(Path(app.config["DATA_DIR"]) / build.path).items(
        condition_split("dev", None)).ids.tolist())
    assert len(clean_ids) == n
