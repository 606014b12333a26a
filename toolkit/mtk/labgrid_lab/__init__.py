"""Labs across hosts on labgrid (coordinator, exporters, places): `mtk bench --lab labgrid`,
`mtk ports --labgrid-exporter`. The labgrid package is imported only when a lab is used."""

from __future__ import annotations

import os

from ..errors import ToolMissing

SCHEME = "labgrid"
DEFAULT_ADDRESS = "127.0.0.1:20408"   # labgrid's own default
LABGRID_INSTALL = "pip install labgrid==26.0.1"


def is_labgrid_lab(lab: str) -> bool:
    return lab == SCHEME or lab.startswith(SCHEME + "://")


def coordinator_address(lab: str) -> str:
    """`labgrid://HOST:PORT`'s address; for plain `labgrid`, LG_COORDINATOR as labgrid's tools read it."""
    address = lab[len(SCHEME) + 3:] if lab.startswith(SCHEME + "://") else ""
    return address or os.environ.get("LG_COORDINATOR") or DEFAULT_ADDRESS


def require_labgrid() -> None:
    try:
        import labgrid  # noqa: F401
    except ImportError:
        raise ToolMissing("labgrid is not installed: `--lab labgrid` is a labgrid client",
                          hint=LABGRID_INSTALL) from None
