"""The ``/api/v1`` blueprint, defined below the modules that attach routes to it so that they
import it without importing the package (whose ``__init__`` imports them all)."""
from __future__ import annotations

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api/v1")
