"""JSON and YAML files users hand to mtk (tuning files, lab hardware maps), read with limits: size,
UTF-8, nesting depth and (YAML) aliases are checked before anything recursive runs, so a deep or
self-multiplying document is one MtkError, not a RecursionError or minutes of work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .errors import MtkError

MAX_BYTES = 64 << 20
MAX_DEPTH = 64
MAX_ALIASES = 100
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _text(path: Path, what: str, max_bytes: int = MAX_BYTES) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise MtkError(f"{what} {path} does not exist") from None
    except OSError as err:
        raise MtkError(f"cannot read {what} {path} ({err.strerror or err})") from None
    if len(data) > max_bytes:
        raise MtkError(f"{what} {path} is larger than {max_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MtkError(f"{what} {path} is not UTF-8 text (byte {err.start})") from None


def _json_depth(text: str) -> int:
    """Bracket nesting outside strings, without recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (c == "\\", c != '"')
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def read_json(path: str | Path, what: str) -> Any:
    path = Path(path)
    text = _text(path, what)
    if _json_depth(text) > MAX_DEPTH:
        raise MtkError(f"{what} {path} nests more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text)
    except ValueError as err:   # JSONDecodeError, and integers beyond Python's digit limit
        raise MtkError(f"{what} {path} is not valid JSON ({err})") from None


def read_yaml(path: str | Path, what: str, max_bytes: int = MAX_BYTES) -> Any:
    """yaml.safe_load after one pass over the event stream (iterative) that bounds depth and aliases;
    libyaml's C parser where PyYAML has it (ten times faster)."""
    path = Path(path)
    text = _text(path, what, max_bytes)
    depth = aliases = 0
    try:
        for event in yaml.parse(text, Loader=LOADER):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise MtkError(f"{what} {path} nests more than {MAX_DEPTH} levels deep")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise MtkError(f"{what} {path} uses more than {MAX_ALIASES} YAML aliases")
        return yaml.load(text, Loader=LOADER)   # noqa: S506 (a safe loader)
    except yaml.YAMLError as err:
        raise MtkError(f"cannot read {what} {path}: {err}") from None
