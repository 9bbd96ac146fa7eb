"""Importing releases of a benchmark (issue 37, item 1): names, resolving, adds-never-changes."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from leaderboard.core.errors import PackError
from leaderboard.server.models import Benchmark, LabelSet
from leaderboard.server.services import benchmarks, releases
from tests.server.releases_util import next_release


def _import(app, session, path):
    bench = benchmarks.import_pack(session, path, data_dir=app.config["DATA_DIR"],
                                   label_keys=app.config["LABEL_KEYS"])
    session.commit()
    return bench


def test_release_two_is_its_own_row_and_release_one_is_untouched(app, session, demo_packs,
                                                                 tmp_path):
    v1 = _import(app, session, demo_packs["syncred"])
    assert (v1.key, v1.family, v1.release) == ("syncred", "syncred", 1)
    v1_state = (v1.pack_path, v1.version, dict(v1.meta_json),
                {ls.split: ls.ciphertext for ls in session.scalars(
                    select(LabelSet).where(LabelSet.benchmark_id == v1.id))})
    v2 = _import(app, session, next_release(demo_packs["syncred"], tmp_path / "r2", release=2,
                                            meta={"version": "2"}))
    assert (v2.key, v2.family, v2.release) == ("syncred-v2", "syncred", 2)
    assert v2.id != v1.id and v2.pack_path != v1.pack_path and v2.released_at is not None
    session.expire_all()
    v1 = session.get(Benchmark, v1.id)
    assert (v1.pack_path, v1.version, dict(v1.meta_json),
            {ls.split: ls.ciphertext for ls in session.scalars(
                select(LabelSet).where(LabelSet.benchmark_id == v1.id))}) == v1_state
    # the family's name means the latest release; -v1 / -v2 name one release each
    assert releases.resolve(session, "syncred").id == v2.id
    assert benchmarks.get_benchmark(session, "syncred").id == v2.id
    assert releases.resolve(session, "syncred-v1").id == v1.id
    assert releases.resolve(session, "syncred-v2").id == v2.id
    assert releases.resolve(session, "syncred-v3") is None
    assert [b.key for b in releases.latest_releases(session)] == ["syncred-v2"]
    assert [b.release for b in releases.releases_of(session, "syncred")] == [1, 2]
    assert releases.public_key(v1, latest=2) == "syncred-v1"
    # importing release 2 again is idempotent
    again = _import(app, session, tmp_path / "r2")
    assert again.id == v2.id
    assert session.scalar(select(Benchmark.id).where(Benchmark.family == "syncred")
                          .order_by(Benchmark.release.desc())) == v2.id


def _flip(label):
    return "real" if label == "fake" else "fake"


@pytest.mark.parametrize("kind", ["changed", "dropped", "gap", "rewrite"])
def test_a_release_that_changes_drops_or_skips_is_refused(app, session, demo_packs, tmp_path,
                                                          kind):
    _import(app, session, demo_packs["syncred"])
    if kind == "rewrite":  # once release 2 exists, release 1 can no longer get a new version
        _import(app, session, next_release(demo_packs["syncred"], tmp_path / "r2", release=2))
        bad = next_release(demo_packs["syncred"], tmp_path / "bad", release=1, add=0,
                           meta={"version": "1b"})
    else:
        bad = next_release(demo_packs["syncred"], tmp_path / "bad",
                           release=3 if kind == "gap" else 2,
                           change_first_label={"label": _flip} if kind == "changed" else None,
                           drop_first=kind == "dropped")
    before = session.scalars(select(Benchmark.key).order_by(Benchmark.key)).all()
    with pytest.raises(PackError) as err:
        benchmarks.import_pack(session, bad, data_dir=app.config["DATA_DIR"],
                               label_keys=app.config["LABEL_KEYS"])
    session.rollback()
    message = str(err.value)
    expected = {"changed": "changed its label field 'label'", "dropped": "missing from",
                "gap": "import release 2 first", "rewrite": "never changes"}[kind]
    assert expected in message, message
    if kind in ("changed", "dropped"):
        assert "split 'dev'" in message
    assert session.scalars(select(Benchmark.key).order_by(Benchmark.key)).all() == before


def test_release_field_is_checked(tmp_path):
    from leaderboard.core.packs import parse_meta
    base = ("key: x\ntitle: X\nmodalities: [image]\nsplits: [test]\n"
            "tasks: [{key: d, kind: detection, modalities: [image], headline: auc}]\n")
    assert parse_meta(base).release == 1
    assert parse_meta(base + "release: 3\n").release == 3
    for bad in ("0", "'2'", "true", "1000"):
        with pytest.raises(PackError) as err:
            parse_meta(base + f"release: {bad}\n")
        assert err.value.problems.items[0].field == "release"
