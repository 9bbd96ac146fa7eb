import pytest

from leaderboard.core.benchmarks.base import _REGISTRY, register
from tests.core.toy import Toy, write_toy_pack


@pytest.fixture(autouse=True, scope="session")
def toy_registered():
    register(Toy)
    yield
    _REGISTRY.pop("toy", None)


@pytest.fixture
def toy_pack(tmp_path):
    return write_toy_pack(tmp_path / "toy")
