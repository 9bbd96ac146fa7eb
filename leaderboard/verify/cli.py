"""The toolkit's verification commands: ``verify``, ``audit-log`` and ``receipt-key``.

Each failure exits with its own code and says what did not match (docs/verify.md has the
table): 2 malformed input, 3 bad signature, 4 unknown key, 5 not in the log, 6 log forked,
7 scores differ, 8 wrong file, 9 server unreachable, 10 a board differs from the log,
11 superseded (the log holds a later receipt of the same submission).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from leaderboard.core.transparency.errors import Failure, Malformed

DEFAULT_SERVER = "http://127.0.0.1:5000"


def _exit(exc: Failure) -> None:
    for line in getattr(exc, "lines", ()):  # what passed before (a superseded receipt)
        click.echo(line)
    click.echo(f"FAILED ({exc.kind}): {exc}", err=True)
    sys.exit(exc.code)


def _read_json(path: Path, what: str) -> dict:
    """A JSON file (a saved head, a key set), refused as Malformed when it is larger or deeper
    than `leaderboard.core.transparency.bounds` allows, before it is parsed."""
    # lazy, as the commands' other imports: `bounds` loads numpy (0.3 s at start-up)
    from leaderboard.core.transparency.bounds import MAX_FILE_BYTES, check_bounds

    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        return json.loads(check_bounds(data, what=f"{what} {path}"))
    except (OSError, ValueError) as exc:
        raise Malformed(f"{path} is not a readable {what} (JSON): {exc}") from None


def _keys(server, keys_file: Path | None):
    from leaderboard.core.transparency.signing import KeySet

    if keys_file is not None:
        try:
            return KeySet.from_document(_read_json(keys_file, "key set"))
        except ValueError as exc:
            raise Malformed(f"{keys_file}: {exc}") from None
    if server is None:
        raise Malformed("give --server (its published keys) or --keys FILE")
    return server.keys()


@click.command()
@click.argument("receipt", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--server", default=None, help="Server URL (default: $LB_SERVER); 'none' to check "
              "offline with --keys.")
@click.option("--keys", "keys_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A saved copy of the server's /api/v1/keys (offline signature check).")
@click.option("--head", "head_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A tree head saved earlier: check that today's log extends it.")
@click.option("--save-head", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the log's current signed head here (for a later --head).")
@click.option("--pack", "pack_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Your copy of the pack (with the split's labels): recompute the scores.")
@click.option("--predictions", type=click.Path(dir_okay=False, path_type=Path),
              help="The predictions file the receipt scored.")
@click.option("--judge", default=None, help="Judge for judge-made records (e.g. rules).")
def verify_cmd(receipt: Path, server: str | None, keys_file: Path | None,
               head_file: Path | None, save_head: Path | None, pack_dir: Path | None,
               predictions: Path | None, judge: str | None) -> None:
    """Verify a signed score receipt: signature, inclusion in the server's transparency log,
    consistency with a saved head, and (with --pack and --predictions) the scores."""
    from leaderboard.core.transparency.bounds import MAX_FILE_BYTES
    from leaderboard.verify.receipt import verify
    from leaderboard.verify.remote import Server

    try:
        url = server or os.environ.get("LB_SERVER") or (None if keys_file else DEFAULT_SERVER)
        remote = None if url in (None, "none") else Server(url)
        try:
            with receipt.open("rb") as fh:  # no further than the cap (`bounds`)
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise Malformed(f"cannot read {receipt}: {exc}") from None
        judge_obj = None
        if judge is not None:
            from leaderboard.judges import get_judge
            judge_obj = get_judge(judge)
        lines, head = verify(data, keys=_keys(remote, keys_file), server=remote,
                             saved_head=_read_json(head_file, "tree head") if head_file else None,
                             pack_dir=pack_dir, predictions=predictions, judge=judge_obj)
    except Failure as exc:
        _exit(exc)
    for line in lines:
        click.echo(line)
    if save_head is not None and head is not None:
        save_head.write_text(json.dumps(head, indent=1) + "\n")
        click.echo(f"saved the log's head ({head['head']['tree_size']} entries) to {save_head}")
    click.echo("OK")


@click.command()
@click.option("--server", default=None, help="Server URL (default: $LB_SERVER).")
@click.option("--from", "from_head", type=click.Path(dir_okay=False, path_type=Path),
              help="A tree head saved earlier: the log must extend it.")
@click.option("--save-head", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the audited head here (the next audit's --from).")
def audit_log_cmd(server: str | None, from_head: Path | None, save_head: Path | None) -> None:
    """Walk the whole transparency log: every signature, the chain of every submission, the
    tree's root, consistency with a saved head; rebuild every board and compare it with the
    live one."""
    from leaderboard.verify.audit import audit
    from leaderboard.verify.remote import Server

    remote = Server(server or os.environ.get("LB_SERVER") or DEFAULT_SERVER)
    try:
        saved = _read_json(from_head, "tree head") if from_head else None
        report = audit(remote, saved_head=saved)
        head = remote.head(report.size) if save_head else None
    except Failure as exc:
        _exit(exc)
    for line in report.lines:
        click.echo(line)
    click.echo(f"{report.boards} boards rebuilt from the log")
    if save_head is not None:
        save_head.write_text(json.dumps(head, indent=1) + "\n")
        click.echo(f"saved the audited head ({report.size} entries) to {save_head}")
    if report.findings:
        for line in report.findings:
            click.echo(f"DIFFERENCE: {line}", err=True)
        click.echo(f"FAILED (board differs from the log): {len(report.findings)} difference(s)",
                   err=True)
        sys.exit(10)
    click.echo("OK")


@click.group("receipt-key")
def receipt_key() -> None:
    """The server's receipt signing keys (files; never in the database)."""


@receipt_key.command("generate")
@click.option("--dir", "key_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Key folder (the server's RECEIPT_KEY_DIR).")
@click.option("--if-missing", is_flag=True, help="Do nothing when the folder has a key already.")
def generate_cmd(key_dir: Path, if_missing: bool) -> None:
    """Create signing.pem (0600) and publish its public key in published.json."""
    from leaderboard.core.transparency.keyfiles import SIGNING_FILE, generate

    if if_missing and (key_dir / SIGNING_FILE).exists():
        click.echo(f"{key_dir / SIGNING_FILE} exists; kept")
        return
    try:
        signer = generate(key_dir)
    except (FileExistsError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    click.echo(f"generated {signer.key_id} in {key_dir}")


@receipt_key.command("rotate")
@click.option("--dir", "key_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Key folder (the server's RECEIPT_KEY_DIR).")
def rotate_cmd(key_dir: Path) -> None:
    """Replace the signing key: the old one stays published (its window closes in a minute),
    so every receipt it signed stays valid; running servers pick the new key up at once."""
    from leaderboard.core.transparency.keyfiles import rotate

    try:
        old, new = rotate(key_dir)
    except (OSError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    click.echo(f"retired {old.key_id if old else '(none)'}; signing with {new.key_id}")
