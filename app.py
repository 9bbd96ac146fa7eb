"""WSGI entry point: ``gunicorn app:app`` or ``flask --app app run``."""
from leaderboard.server.web import create_app

app = create_app()
