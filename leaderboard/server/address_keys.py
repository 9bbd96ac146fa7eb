"""What an e-mail address says about who holds it (issue 35): its normalised *key* and whether
its domain is a free-mail one.

``address_key`` folds the spellings one mailbox answers to, so that two accounts of one person
compare equal: lower case; a ``+tag`` dropped where the provider delivers ``a+x@`` to ``a@``
(Gmail, Outlook/Hotmail, iCloud, Fastmail, Proton, Yandex...); dots in the local part dropped
where the provider ignores them (Gmail only), and ``googlemail.com`` folded into ``gmail.com``.
Other domains keep their local part as written (lower-cased): a university's ``a.b@`` and
``ab@`` may be two people.

``domain_kind`` reads the shipped list ``data/freemail_domains.txt`` (no network call): "free"
for a listed domain or a subdomain of one, else "institutional" (which only means "not a known
free-mail domain": a reviewer still judges it).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DOMAIN_LIST = Path(__file__).with_name("data") / "freemail_domains.txt"

#: providers that deliver ``local+tag@`` to ``local@``
PLUS_TAGS = frozenset({
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com",
    "icloud.com", "me.com", "mac.com", "fastmail.com", "fastmail.fm", "proton.me",
    "protonmail.com", "protonmail.ch", "pm.me", "yandex.com", "yandex.ru", "ya.ru",
    "zoho.com", "tutanota.com", "posteo.de"})
#: providers that ignore dots in the local part
DOTLESS = frozenset({"gmail.com", "googlemail.com"})
#: one provider under two names
ALIASES = {"googlemail.com": "gmail.com"}


def split_address(email: str) -> tuple[str, str]:
    """(local part, lower-cased domain); the domain is "" for a string without ``@``."""
    local, at, domain = (email or "").strip().rpartition("@")
    if not at:
        return (email or "").strip(), ""
    return local, domain.lower()


def address_key(email: str) -> str:
    """The normalised address one mailbox answers to (see the module docstring)."""
    local, domain = split_address(email)
    local = local.lower()
    if domain in PLUS_TAGS:
        local = local.split("+", 1)[0]
    if domain in DOTLESS:
        local = local.replace(".", "")
    domain = ALIASES.get(domain, domain)
    return f"{local}@{domain}" if domain else local


@lru_cache(maxsize=1)
def free_domains() -> frozenset[str]:
    """The shipped free-mail and disposable domains."""
    lines = DOMAIN_LIST.read_text(encoding="utf-8").splitlines()
    return frozenset(s.strip().lower() for s in lines if s.strip() and not s.startswith("#"))


def domain_kind(email: str) -> str:
    """"free" when the address's domain (or a parent domain) is a known free-mail one, else
    "institutional"."""
    _, domain = split_address(email)
    parts = domain.split(".")
    free = free_domains()
    return "free" if any(".".join(parts[i:]) in free for i in range(len(parts))) \
        else "institutional"
