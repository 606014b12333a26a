"""Labs across hosts on labgrid (coordinator, exporters, places): `mtk bench --lab labgrid`,
`mtk ports --labgrid-exporter`. The labgrid package is imported only when a lab is used."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from ..errors import MtkError, ToolMissing

SCHEME = "labgrid"
DEFAULT_ADDRESS = "127.0.0.1:20408"   # labgrid's own default
LABGRID_INSTALL = "pip install labgrid==26.0.1"


def is_labgrid_lab(lab: str) -> bool:
    return lab == SCHEME or lab.startswith(SCHEME + "://")


def coordinator_address(lab: str) -> str:
    """`labgrid://HOST[:PORT]`'s address; for plain `labgrid`, LG_COORDINATOR as labgrid's tools read it.
    MtkError for an address that is not HOST[:PORT] (a hostname, an IPv4 or a bracketed IPv6 address,
    a port 1..65535)."""
    address = lab[len(SCHEME) + 3:] if lab.startswith(SCHEME + "://") else ""
    if address:
        return checked_address(address, f"--lab {lab}")
    if os.environ.get("LG_COORDINATOR"):
        return checked_address(os.environ["LG_COORDINATOR"], "LG_COORDINATOR")
    return DEFAULT_ADDRESS


def checked_address(address: str, origin: str) -> str:
    try:
        parts = urlsplit("//" + address)
        port = parts.port
    except ValueError as err:
        raise MtkError(f"{origin}: {address!r} is not a coordinator address HOST[:PORT] ({err})") from None
    if not parts.hostname or port == 0 or parts.username is not None or parts.password is not None \
            or any((parts.path, parts.query, parts.fragment)) or "?" in address or "#" in address \
            or not address.isprintable() or " " in address:
        raise MtkError(f"{origin}: {address!r} is not a coordinator address HOST[:PORT] (port 1..65535)")
    return address


def require_labgrid() -> None:
    try:
        import labgrid  # noqa: F401
    except ImportError:
        raise ToolMissing("labgrid is not installed: `--lab labgrid` is a labgrid client",
                          hint=LABGRID_INSTALL) from None
