"""Upload requests are checked before their body is read, and the file is streamed, never spooled.

Werkzeug parses a whole multipart body (files to temporary files) the first time anything reads
``request.form``, and the CSRF check does that first; so an anonymous ``POST /submit`` with a
1 GiB body wrote 1 GiB before its 400. For the two upload endpoints (`UPLOAD_ENDPOINTS`) the
`gate` (a ``before_request`` hook that runs before the CSRF check, the rate limiter and the view)
does instead, in order:

1. **who**, from the headers alone: the API's Bearer token (401) or the logged-in session (the
   login redirect), the caller's upload rate limit (429), an active account in a team (403);
   and, when the query string names the target (``?benchmark=&split=&challenge=&kind=``, as
   the command-line client sends it), every check of the target
   (`leaderboard.server.web.intake.preflight`: split, challenge phase, agreement, quota); not
   one body byte is read for a refusal;
2. **how big**, from the headers: a ``Content-Length`` over the largest upload the route takes
   (the image cap, ``MAX_IMAGE_MB``, plus the form) is a 413 at once;
3. **the form fields**, streamed up to the file part and no further (at most ``MAX_BODY_BYTES``
   of them; fields must come before the file, as browsers and our client send them); they are
   checked for control characters and become ``request.form``, so that the CSRF check, the rate
   limiter and the view's own checks (benchmark, split, quota, data-use gate:
   `leaderboard.server.services.submissions.check_request`) all run before the file is read;
   a held-out split also needs a verified address (`leaderboard.server.access.verified`,
   ``REQUIRE_VERIFIED_EMAIL``), checked here for every upload route;
4. **the file's cap**, from the ``kind`` field: predictions ``MAX_UPLOAD_MB``, images
   ``MAX_IMAGE_MB``; a ``Content-Length`` over it is a 413 before the file is read;
5. **the file** becomes ``request.files["file"]``, a stream over the rest of the body that the
   service reads straight into ``DATA_DIR`` (no temporary copy); it counts the bytes, so a body
   without a length (chunked) is cut one byte past the cap, which the service turns into its 413.

Reading the body has an idle timeout (``CLIENT_BODY_TIMEOUT_S``, set on gunicorn's socket): a
client that stops sending for that long gets a 408 and loses its connection.

A body left unread after a refusal is never read to its end nor written anywhere: the answer
says ``Connection: close`` and the connection ends right after it
(`leaderboard.server.web.hardening.close_refused`, gunicorn's ``post_request`` in
`leaderboard.server.gunicorn_conf`: at most 0.5 s of lingering so the client reads the answer;
behind nginx, the upload location's ``lingering_time``). Before issue 24 gunicorn read a refused
1 GiB body to its end (70-80 s of a worker) before the next request on the connection.
"""
from __future__ import annotations

from flask import current_app, request
from flask_login import current_user
from werkzeug.datastructures import FileStorage, ImmutableMultiDict
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData

from leaderboard.core.errors import ProblemList
from leaderboard.server.access import verified
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.web.inputs import UPLOAD_ENDPOINTS, BadInput, check_form, is_upload
from leaderboard.server.web.intake import TARGET_FIELDS, preflight
from leaderboard.server.web.requests import api_user

#: form fields the services check before reading the file; they must precede it
_BEFORE_FILE = ("benchmark", "split", "method_name")
_CHUNK = 64 * 1024
_MAX_PARTS = 64


__all__ = ["UPLOAD_ENDPOINTS", "TooLarge", "file_cap", "gate", "is_upload"]


class TooLarge(ServiceError):
    status = 413
    code = "too_large"


def file_cap(kind: str) -> int:
    """Bytes the file of a ``kind`` upload may have (predictions or container images)."""
    cfg = current_app.config
    mb = cfg["MAX_IMAGE_MB"] if kind == "container" else cfg["MAX_UPLOAD_MB"]
    return mb * 1024 * 1024


def gate():
    """``before_request``: authenticate, authorise and size an upload before its body is read."""
    if not is_upload():
        return None
    if request.endpoint == "api.create_submission":
        user = api_user()  # 401 without a valid token
    elif not current_user.is_authenticated:
        return current_app.login_manager.unauthorized()
    else:
        user = current_user
    current_app.extensions["lb_upload_rate_limit"]()  # SUBMIT_RATE_LIMIT per caller (429)
    if user.team_id is None:
        raise Forbidden("join or create a team before submitting: quotas and boards are per team")
    if any(request.args.get(name) for name in TARGET_FIELDS):
        preflight(user, request.args)  # the target named in the query string: no byte read yet
    form_cap = current_app.config["MAX_BODY_BYTES"]
    length = request.content_length
    largest = max(file_cap("container"), file_cap("predictions")) + form_cap
    if length is not None and length > largest:
        raise TooLarge(f"the request is {length} bytes, over the largest upload this server "
                       f"takes ({largest} bytes)")
    boundary = request.mimetype_params.get("boundary", "")
    if request.mimetype != "multipart/form-data" or not boundary:
        problems = ProblemList()
        problems.add("send a multipart/form-data body: the fields, then the file", field="file")
        raise BadInput("no file was uploaded", problems)
    sock = request.environ.get("gunicorn.socket")
    if sock is not None and hasattr(sock, "settimeout"):
        sock.settimeout(current_app.config["CLIENT_BODY_TIMEOUT_S"])  # idle, per read
    body = _Body(request.stream, boundary.encode("latin-1"), form_cap)
    fields, file_part = body.read_fields()
    check_form(fields)
    present = {name for name, _ in fields}
    missing = [name for name in _BEFORE_FILE if name not in present]
    if file_part is not None and missing:
        raise BadInput(f"the form field {missing[0]!r} must come before the file part (send "
                       f"the fields {', '.join(_BEFORE_FILE)} first, then the file)")
    # a held-out split needs a verified address (issue 35), refused before the file is read
    verified.check_submission(user, dict(fields).get("split", "").strip(),
                              required=current_app.config["REQUIRE_VERIFIED_EMAIL"])
    kind = dict(fields).get("kind", "predictions").strip()
    cap = file_cap(kind)
    if length is not None and length > cap + body.consumed + form_cap:
        raise TooLarge(f"the file is larger than the {cap // (1024 * 1024)} MB limit for "
                       f"{'images' if kind == 'container' else 'predictions files'}")
    files = []
    if file_part is not None:
        files.append((file_part.name, FileStorage(
            stream=body.file_stream(cap + 1), filename=file_part.filename, name=file_part.name,
            headers=file_part.headers)))
    # What Werkzeug would have parsed, without having read the file: CSRF and the view use it.
    request.__dict__["form"] = ImmutableMultiDict(fields)
    request.__dict__["files"] = ImmutableMultiDict(files)
    return None


class _Body:
    """A multipart body read forward: the fields before the file part, then that part as a
    stream. Parts after the file are refused when the file's end is reached."""

    def __init__(self, stream, boundary: bytes, form_cap: int) -> None:
        self._stream = stream
        self._decoder = MultipartDecoder(boundary, max_form_memory_size=form_cap,
                                         max_parts=_MAX_PARTS)
        self._form_cap = form_cap
        self.consumed = 0
        self._eof = False

    def _event(self):
        while True:
            try:
                event = self._decoder.next_event()
            except RequestEntityTooLarge:
                raise TooLarge(f"a form field is larger than {self._form_cap} bytes") from None
            except ValueError as exc:
                raise BadInput(f"the multipart body is malformed: {exc}") from None
            if not isinstance(event, NeedData):
                return event
            if self._eof:
                raise BadInput("the multipart body ended before its closing boundary")
            try:
                chunk = self._stream.read(_CHUNK)
            except (TimeoutError, ClientDisconnected) as exc:
                if isinstance(exc, TimeoutError) or isinstance(exc.__context__, TimeoutError):
                    raise ServiceError("the upload stalled: no data arrived for "
                                       f"{current_app.config['CLIENT_BODY_TIMEOUT_S']} s",
                                       status=408, code="timeout") from None
                raise BadInput("the upload was cut off before its end") from None
            self.consumed += len(chunk)
            self._eof = not chunk
            self._decoder.receive_data(chunk or None)

    def read_fields(self) -> tuple[list[tuple[str, str]], File | None]:
        fields: list[tuple[str, str]] = []
        current: Field | None = None
        parts: list[bytes] = []
        while True:
            event = self._event()
            if isinstance(event, Field):
                current, parts = event, []
            elif isinstance(event, Data) and current is not None:
                parts.append(event.data)
                if not event.more_data:
                    fields.append((current.name, b"".join(parts).decode("utf-8", "replace")))
                    current = None
            elif isinstance(event, File):
                return fields, event
            elif isinstance(event, Epilogue):
                return fields, None
            if self.consumed > self._form_cap + _CHUNK:
                raise TooLarge(f"the form fields before the file are larger than "
                               f"{self._form_cap} bytes")

    def file_stream(self, limit: int) -> _FileStream:
        return _FileStream(self, limit)


class _FileStream:
    """The file part's bytes, at most ``limit`` of them (then end of file: the reader, which
    caps one byte lower, reports the file as too large)."""

    def __init__(self, body: _Body, limit: int) -> None:
        self._body, self._limit = body, limit
        self._buffer = b""
        self._done = False
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        want = _CHUNK if size is None or size < 0 else size
        while len(self._buffer) < want and not self._done and self.size < self._limit:
            event = self._body._event()
            if isinstance(event, Data):
                self._buffer += event.data
                self.size += len(event.data)
                if not event.more_data:
                    self._done = True
                    self._refuse_parts_after_the_file()
            else:
                self._done = True
        data, self._buffer = self._buffer[:want], self._buffer[want:]
        return data

    def _refuse_parts_after_the_file(self) -> None:
        event = self._body._event()
        if not isinstance(event, Epilogue):
            raise BadInput("the file must be the last part of the form; send the fields first")

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._buffer = b""
