import pytest

from tests.server.mail.smtp import SmtpServer


@pytest.fixture
def smtp():
    server = SmtpServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def app_config(app_config, smtp):
    """The app sends to the test's SMTP server; addresses must be verified (the setting on)."""
    app_config.update(smtp.config(), REQUIRE_VERIFIED_EMAIL="1")
    return app_config
