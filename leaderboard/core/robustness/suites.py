"""Degradation suites: named, versioned, per modality; five severity levels each (ImageNet-C).

A *suite* is data: for each degradation, the parameters of levels 1..5 (level 0 is the clean
item). The transforms that apply them live in `leaderboard.builders.degrade` (they need Pillow,
OpenCV and ffmpeg, the builders' extras); this module only says *what* each level means, so
the scoring core, the server and the docs read one definition.

Versioning (sacreBLEU's habit, not a copy of code): a suite is registered as ``name@version``;
its *signature* (`Suite.signature`) hashes the name, version and every level's parameters. Any
change to what a transform does must register a new version; the degraded copies are cached by
the pack's digest and that signature, so a new version rebuilds and nothing else does.

=========== ================== ===================================================================
suite@v     degradation        levels 1..5
=========== ================== ===================================================================
images@1    ``jpeg``           JPEG quality 90, 75, 50, 30, 10 (Pillow, 4:2:0, no optimise)
images@1    ``resize``         scale 0.9, 0.75, 0.5, 0.35, 0.25 down, then back (bilinear both)
images@1    ``blur``           Gaussian blur, sigma 0.5, 1, 1.5, 2, 3 px (Pillow)
images@1    ``noise``          additive Gaussian noise, sigma 0.01, 0.02, 0.04, 0.08, 0.16 of
                               full scale, per pixel and channel, seeded per item
images@1    ``crop``           centre crop keeping 0.9, 0.8, 0.7, 0.6, 0.5 of each side, resized
                               back to the original size (bilinear)
video@1     ``h264``           H.264 (libx264, preset medium) at CRF 23, 28, 33, 38, 45
video@1     ``fps``            frame rate x 0.8, 2/3, 1/2, 1/3, 1/4 (ffmpeg fps filter; level 3
                               halves it), lossless x264
video@1     ``resize``         scale 0.9, 0.75, 0.5, 0.35, 0.25 down and back, lossless x264
audio@1     ``mp3``            MP3 (libmp3lame CBR) 128 kbps 44.1 kHz, 64 kbps 44.1 kHz,
                               32 kbps 32 kHz, 16 kbps 16 kHz, 8 kbps 8 kHz
audio@1     ``opus``           Opus (libopus, Ogg) 64, 32, 16, 12, 6 kbps (decodes at 48 kHz)
audio@1     ``resample``       resampled to 0.75, 0.5, 0.375, 0.25, 0.125 of its rate (kept)
audio@1     ``noise``          additive white Gaussian noise at SNR 40, 30, 20, 10, 5 dB
=========== ================== ===================================================================
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

LEVELS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Degradation:
    """One named degradation of a suite: ``params[level - 1]`` are level ``level``'s settings."""

    name: str
    title: str
    params: tuple[dict, ...]
    #: suffix of the degraded file (None: the original's)
    suffix: str | None = None

    def level(self, level: int) -> dict:
        if level not in range(1, len(self.params) + 1):
            raise ValueError(f"{self.name}: level must be 1..{len(self.params)}, got {level!r}")
        return dict(self.params[level - 1])

    def describe(self, level: int) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.level(level).items())


@dataclass(frozen=True)
class Suite:
    """A versioned set of degradations for one modality."""

    name: str
    version: str
    modality: str
    degradations: tuple[Degradation, ...]
    notes: str = ""
    _index: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def degradation(self, name: str) -> Degradation:
        for d in self.degradations:
            if d.name == name:
                return d
        raise KeyError(f"suite {self.ref} has no degradation {name!r}; it has "
                       f"{[d.name for d in self.degradations]}")

    @property
    def signature(self) -> str:
        """A digest of everything that decides the degraded bytes (name, version, parameters)."""
        body = {"suite": self.name, "version": self.version, "modality": self.modality,
                "degradations": [{"name": d.name, "suffix": d.suffix, "params": list(d.params)}
                                 for d in self.degradations]}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _levels(key: str, values, **fixed) -> tuple[dict, ...]:
    return tuple({key: v, **fixed} for v in values)


SCALES = (0.9, 0.75, 0.5, 0.35, 0.25)

IMAGES_1 = Suite("images", "1", "image", (
    Degradation("jpeg", "JPEG re-compression", _levels("quality", (90, 75, 50, 30, 10)), ".jpg"),
    Degradation("resize", "resize down and back", _levels("scale", SCALES), ".png"),
    Degradation("blur", "Gaussian blur", _levels("sigma", (0.5, 1.0, 1.5, 2.0, 3.0)), ".png"),
    Degradation("noise", "Gaussian noise", _levels("sigma", (0.01, 0.02, 0.04, 0.08, 0.16)),
                ".png"),
    Degradation("crop", "centre crop", _levels("keep", (0.9, 0.8, 0.7, 0.6, 0.5)), ".png"),
), notes="PNG output except JPEG (lossless, so only the named change applies)")

VIDEO_1 = Suite("video", "1", "video", (
    Degradation("h264", "H.264 re-encode", _levels("crf", (23, 28, 33, 38, 45)), ".mp4"),
    Degradation("fps", "frame-rate reduction",
                _levels("factor", (0.8, 0.6667, 0.5, 0.3333, 0.25)), ".mp4"),
    Degradation("resize", "resize down and back", _levels("scale", SCALES), ".mp4"),
), notes="fps and resize are encoded losslessly (x264 qp 0, 4:2:0 chroma)")

AUDIO_1 = Suite("audio", "1", "audio", (
    Degradation("mp3", "MP3 re-encode", (
        {"kbps": 128, "rate": 44100}, {"kbps": 64, "rate": 44100}, {"kbps": 32, "rate": 32000},
        {"kbps": 16, "rate": 16000}, {"kbps": 8, "rate": 8000}), ".mp3"),
    Degradation("opus", "Opus re-encode", _levels("kbps", (64, 32, 16, 12, 6)), ".ogg"),
    Degradation("resample", "resampling",
                _levels("factor", (0.75, 0.5, 0.375, 0.25, 0.125)), ".wav"),
    Degradation("noise", "additive noise", _levels("snr_db", (40, 30, 20, 10, 5)), ".wav"),
), notes="noise and resample write 16-bit PCM WAV")

#: every registered suite, by ``name@version``
SUITES: dict[str, Suite] = {}
#: the suite a pack gets for a modality when its benchmark.yaml names none
DEFAULT_SUITE = {"image": "images", "video": "video", "audio": "audio"}


def register_suite(suite: Suite) -> Suite:
    """Add a suite (a new version of a changed transform); an existing ref is never replaced."""
    if suite.ref in SUITES and SUITES[suite.ref] != suite:
        raise ValueError(f"suite {suite.ref} is already registered with other parameters; "
                         "register a new version instead")
    SUITES[suite.ref] = suite
    return suite


for _s in (IMAGES_1, VIDEO_1, AUDIO_1):
    register_suite(_s)


def latest(name: str) -> Suite:
    versions = [s for s in SUITES.values() if s.name == name]
    if not versions:
        known = sorted({s.name for s in SUITES.values()})
        raise KeyError(f"no suite named {name!r}; known: {known}")
    return max(versions, key=lambda s: _version_key(s.version))


def _version_key(version: str) -> tuple:
    """Natural order ("2" < "10"; "1" < "1.1"); non-numeric parts compare as text after numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in version.replace("-", ".").split("."))


def get_suite(name: str, version: str | None = None) -> Suite:
    """``name@version`` (the newest version when ``version`` is None); KeyError names both."""
    if version is None:
        return latest(name)
    ref = f"{name}@{version}"
    if ref not in SUITES:
        known = sorted(s.version for s in SUITES.values() if s.name == name)
        raise KeyError(f"no suite {ref}; versions of {name!r} known here: {known}")
    return SUITES[ref]
