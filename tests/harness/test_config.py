import pytest

from harness import Limits


def test_defaults_are_valid_and_recordable():
    record = Limits().as_record()
    assert record["memory_bytes"] > 0 and record["user"] is None


@pytest.mark.parametrize("field, value", [("wall_s", 0), ("pids", -1), ("pids", 1.5), ("cpus", True),
                                          ("memory_bytes", "1g"), ("poll_s", 5.0)])
def test_bad_numbers_are_named(field, value):
    with pytest.raises(ValueError, match=field):
        Limits(**{field: value})


@pytest.mark.parametrize("user", ["0", "0:0", "root", "1000:abc"])
def test_root_or_symbolic_user_refused(user):
    with pytest.raises(ValueError, match="user"):
        Limits(user=user)


def test_from_mapping_converts_and_ignores_other_keys():
    limits = Limits.from_mapping({"HARNESS_WALL_S": "12.5", "HARNESS_PIDS": "32", "HARNESS_USER": "1000:1000",
                                  "OTHER": "x"})
    assert (limits.wall_s, limits.pids, limits.user) == (12.5, 32, "1000:1000")


def test_from_mapping_names_bad_key():
    with pytest.raises(ValueError, match="HARNESS_PIDS"):
        Limits.from_mapping({"HARNESS_PIDS": "many"})
