"""The disk watchdog alone: growth past the allowance trips it, cuts the upload, runs actions."""

import io
import time

import pytest

from harness.watchdog import DiskWatchdog, LoadStopped, docker_root_probe, used_bytes, watched_body


class _Disk:
    def __init__(self):
        self.used = 1000

    def __call__(self):
        return self.used


def test_growth_within_the_allowance_does_not_trip():
    disk = _Disk()
    with DiskWatchdog(disk, allowance=100, poll_s=0.01) as dog:
        disk.used += 100
        time.sleep(0.05)
    assert not dog.tripped.is_set() and dog.grown == 100


def test_growth_past_the_allowance_trips_runs_actions_and_cuts_the_body():
    disk = _Disk()
    closed = []
    body = watched_body(io.BytesIO(bytes(3 << 20)), dog := DiskWatchdog(disk, allowance=100, poll_s=0.01))
    with dog:
        dog.on_trip(lambda: closed.append(True))
        assert len(next(body)) == 1 << 20
        disk.used += 101
        deadline = time.monotonic() + 2
        while not dog.tripped.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(LoadStopped):
            next(body)
    assert dog.tripped.is_set() and closed == [True] and dog.grown == 101


def test_a_load_finished_between_polls_is_still_measured_at_stop():
    disk = _Disk()
    dog = DiskWatchdog(disk, allowance=10, poll_s=1.0).start()
    disk.used += 11
    dog.stop()
    assert dog.tripped.is_set()


def test_no_probe_never_trips():
    with DiskWatchdog(None, allowance=0, poll_s=0.01) as dog:
        pass
    assert not dog.enabled and not dog.tripped.is_set()


def test_an_invisible_data_root_turns_the_probe_off(tmp_path):
    class Client:
        def __init__(self, root):
            self.root = root

        def info(self):
            return {"DockerRootDir": self.root}

    assert docker_root_probe(Client(str(tmp_path / "absent"))) is None
    probe = docker_root_probe(Client(str(tmp_path)))
    assert probe is not None and probe() == used_bytes(str(tmp_path))
