"""`mtk` command line: one subcommand per module in mtk.commands."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import __version__, commands, ui
from .errors import MtkError


def _command_modules():
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"{commands.__name__}.{info.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mtk",
        description="Compile int8 TFLite models to plain C through Apache TVM and run them on Cortex-M "
        "boards (QEMU, Zephyr, bare metal), with timing read back over the serial port.",
    )
    parser.add_argument("--version", action="version", version=f"mtk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _command_modules():
        p = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    ui.set_quiet(args.quiet)
    try:
        return int(args._run(args) or 0)
    except MtkError as err:
        print(f"mtk {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"mtk {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
