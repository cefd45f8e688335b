"""What every network server gui-gym runs checks before a request reaches it (issue 46):
``gui-gym serve-openenv`` (:mod:`gui_gym.integrations.openenv`, ASGI under uvicorn) and the
run viewer ``gui-gym serve`` (:mod:`gui_gym.view.server`, the standard library's
``http.server``) share the rules below; this module imports neither server.

* **Host**: a request's ``Host`` must name the server as it was bound: on a loopback bind
  (the default ``127.0.0.1``) only ``localhost``, ``127.0.0.1`` and ``::1`` (a DNS-rebinding
  page that resolves ``attacker.example`` to 127.0.0.1 sends its own name and is refused);
  on a specific address, that address or a loopback name; on a wildcard bind (``0.0.0.0``,
  ``::``) any name, and the token is what protects the server.
* **Origin**: a browser sends ``Origin`` with every WebSocket upgrade and every cross-site
  request; one that is not the server's own (``http(s)://`` + the request's ``Host``) is
  refused, so a page the user visits cannot drive a local server. A request without
  ``Origin`` (a program, not a browser page) is not refused for it.
* **Token**: ``--token`` makes every request carry it, as ``Authorization: Bearer TOKEN`` or
  a ``token=TOKEN`` query parameter (for WebSocket clients that cannot set headers; the
  run viewer also accepts the cookie it sets on the first such visit), compared in constant
  time. A non-loopback ``--host`` needs a token (:func:`check_bind`).
"""

from __future__ import annotations

import hmac
import ipaddress
import urllib.parse
from collections.abc import Iterable, Mapping

__all__ = [
    "LOOPBACK_NAMES",
    "TOKEN_COOKIE",
    "check_bind",
    "host_allowed",
    "host_name",
    "is_loopback",
    "is_wildcard",
    "origin_allowed",
    "request_token",
    "token_matches",
]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""The names a loopback-bound server answers to."""

TOKEN_COOKIE = "gui_gym_token"
"""The cookie the run viewer sets after a ``?token=`` visit, so its links need no token."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine only."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Whether binding ``host`` listens on every interface (``""``, ``0.0.0.0``, ``::``)."""
    return host.strip().strip("[]") in ("", "0.0.0.0", "::")


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve other machines without a token.

    Raises:
        ValueError: when ``host`` is not a loopback address and ``token`` is empty, or the
            token is too short to be a secret.
    """
    if token is not None and len(token) < 16:
        raise ValueError(
            f"--token must be at least 16 characters (got {len(token)}); e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(24))'"
        )
    if not is_loopback(host) and not token:
        raise ValueError(
            f"--host {host} serves other machines: give --token SECRET too (clients send "
            "'Authorization: Bearer SECRET' or ?token=SECRET), or bind 127.0.0.1"
        )


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or URL netloc, lower case, without port or
    brackets (``"[::1]:8000"`` -> ``"::1"``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def host_allowed(value: str | None, bound: str) -> bool:
    """Whether a request's ``Host`` header names a server bound to ``bound``."""
    if is_wildcard(bound):
        return True
    if not value:
        return False
    name = host_name(value)
    return name in LOOPBACK_NAMES or name == host_name(bound)


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """Whether ``Origin`` (None: not a browser page) is the server's own: ``http(s)://``
    followed by the request's ``Host``."""
    if origin is None:
        return True
    parts = urllib.parse.urlsplit(origin.strip().lower())
    if parts.scheme not in ("http", "https") or not host:
        return False  # "null" (a sandboxed or file page) and other schemes are foreign
    return parts.netloc == host.strip().lower()


def token_matches(given: str | None, expected: str | None) -> bool:
    """Whether ``given`` is the server's token (None expected: no token needed); a constant
    time comparison."""
    if not expected:
        return True
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def request_token(
    headers: Mapping[str, str], query: str, cookies: Iterable[str] = ()
) -> tuple[str | None, str]:
    """The token a request carries and where: ``(token, "header" | "query" | "cookie")``,
    or ``(None, "")``. Headers are matched case-insensitively (give a lower-case mapping)."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip(), "header"
    try:
        fields = urllib.parse.parse_qs(query, max_num_fields=64)
    except ValueError:
        fields = {}
    if fields.get("token"):
        return fields["token"][-1], "query"
    for cookie in cookies:
        for part in cookie.split(";"):
            name, _, value = part.strip().partition("=")
            if name == TOKEN_COOKIE:
                return urllib.parse.unquote(value), "cookie"
    return None, ""
