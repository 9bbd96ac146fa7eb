"""Admin console: the Outbox (issue 35). Every message the site wrote, newest first, with its
state (`leaderboard.server.models.mail.OUTBOX_STATES`) and last error; one message in full
(on the embedded default, with no SMTP server, this is where a verification or reset link is
read); "send again" for kept, unconfirmed and failed messages. Routes join the admin blueprint
(its admins-only guard applies); sending again is audited.
"""
from __future__ import annotations

from flask import flash, render_template, request
from flask_login import current_user

from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.models.mail import OUTBOX_STATES, Outbox
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.services import outbox
from leaderboard.server.web.admin_base import _back, _fail, _ip, bp
from leaderboard.server.web.inputs import int_param


@bp.get("/outbox")
def outbox_page():
    session = get_session()
    status = request.args.get("status", "")
    if status not in OUTBOX_STATES:
        status = ""
    before = int_param("before", request.args.get("before"), low=1)
    rows = outbox.listing(session, status=status or None, before=before)
    return render_template("admin/outbox.html", rows=rows, status=status, states=OUTBOX_STATES,
                           counts=outbox.counts(session), resendable=outbox.RESENDABLE)


@bp.get("/outbox/<int:outbox_id>")
def outbox_message(outbox_id: int):
    row = get_session().get(Outbox, outbox_id)
    if row is None:
        raise NotFound(f"no message {outbox_id} in the outbox")
    return render_template("admin/outbox_message.html", row=row, resendable=outbox.RESENDABLE)


@bp.post("/outbox/<int:outbox_id>/resend")
def outbox_resend(outbox_id: int):
    session = get_session()
    try:
        row = outbox.resend(session, outbox_id)
    except ServiceError as exc:
        return _fail(exc, "admin.outbox_page")
    audit.record(session, current_user, "admin.mail_resend", f"outbox:{row.id}",
                 {"to": row.to_addr, "message_id": row.message_id}, _ip())
    session.commit()  # the commit hands the row to the mail job
    flash(f"Message {row.id} to {row.to_addr} is queued again.")
    return _back("admin.outbox_page")
