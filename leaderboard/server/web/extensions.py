"""Flask extensions, created unbound here and bound to an app in `create_app`."""
from __future__ import annotations

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Please log in to see this page."
login_manager.session_protection = "strong"
# A Redis outage must not turn rate-limited endpoints into 500s: fall back to memory.
limiter = Limiter(get_remote_address, default_limits=[], swallow_errors=True,
                  in_memory_fallback_enabled=True)
