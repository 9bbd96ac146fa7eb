"""Build tiny test images around Debian's static busybox (no registry needed).

Each image is ``FROM scratch`` + ``/bin/busybox`` (applets installed as symlinks at build time)
+ ``/entry.sh``, whose script is the scenario. Built with ``network_mode="none"``: the test
engine has no bridge.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import docker

BUSYBOX = Path("/bin/busybox")
DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
COPY entry.sh /entry.sh
{extra}
ENTRYPOINT ["/bin/sh", "/entry.sh"]
"""


def build_script_image(client: docker.DockerClient, *, tag: str, script: str, extra: str = "") -> str:
    """Build an image that runs ``script`` with busybox sh; return its id."""
    if not BUSYBOX.is_file():
        raise FileNotFoundError(f"{BUSYBOX} is missing: run scripts/start-docker.sh (installs busybox-static)")
    with tempfile.TemporaryDirectory(prefix="lb-testimg-") as tmp:
        ctx = Path(tmp)
        shutil.copy2(BUSYBOX, ctx / "busybox")
        (ctx / "entry.sh").write_text(script)
        (ctx / "Dockerfile").write_text(DOCKERFILE.format(extra=extra))
        image, _ = client.images.build(path=str(ctx), tag=tag, network_mode="none", rm=True, forcerm=True)
    return image.id


def save_image(client: docker.DockerClient, image_id: str, dest: Path) -> Path:
    """``docker save`` (through the API) of one image id to ``dest``."""
    image = client.images.get(image_id)
    with dest.open("wb") as fh:
        for chunk in image.save(named=False):
            fh.write(chunk)
    return dest
