"""`mtk` command line: one subcommand per module in mtk.commands.

Only the module of the command being run is imported (the others' NAME and HELP are read from
their source), so that `mtk --help`, `mtk boards` or `mtk ports` start without TVM or TFLite.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import pkgutil
import select
import signal
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TextIO

from . import __version__, commands, fsutil, interrupts, ui
from .cliparser import MtkParser
from .errors import INTERNAL_ERROR_EXIT, MtkError, user_path_error


@dataclass(frozen=True)
class Command:
    module: str   # module name in mtk.commands
    name: str
    help: str

    def load(self) -> ModuleType:
        return importlib.import_module(f"{commands.__name__}.{self.module}")


def _literal_constants(source: Path, names: tuple[str, ...]) -> dict[str, object]:
    """Module-level `NAME = <literal>` assignments of a source file."""
    constants = {}
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in names:
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:   # not a literal (e.g. an f-string)
                pass
    return constants


def all_commands() -> list[Command]:
    found = []
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        constants = _literal_constants(Path(info.module_finder.path) / f"{info.name}.py", ("NAME", "HELP"))
        if len(constants) < 2:   # not literals: ask the module itself
            module = importlib.import_module(f"{commands.__name__}.{info.name}")
            constants = {"NAME": module.NAME, "HELP": module.HELP}
        found.append(Command(info.name, str(constants["NAME"]), str(constants["HELP"])))
    return found


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `only`, the arguments of that command alone (the others are listed
    with their help but their modules are not imported)."""
    parser = MtkParser(
        prog="mtk",
        description="Compile int8 TFLite models to plain C through Apache TVM and run them on Cortex-M "
        "boards (QEMU, Zephyr, bare metal), with timing read back over the serial port.",
    )
    parser.add_argument("--version", action="version", version=f"mtk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in all_commands():
        if only is not None and command.name != only:
            sub.add_parser(command.name, help=command.help, description=command.help)
            continue
        module = command.load()
        p = sub.add_parser(command.name, help=command.help, description=getattr(module, "DESCRIPTION", command.help))
        p.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
        module.add_arguments(p)
        p.accept_old_spellings()
        p.set_defaults(_run=module.run, _parser=p, _outputs=getattr(module, "OUTPUT_ARGS", OUTPUT_ARGS))
    return parser


def _command_name(argv: list[str]) -> str:
    """The subcommand named on the command line ("" for none: `mtk --help`, `mtk --version`)."""
    return next((arg for arg in argv if not arg.startswith("-")), "")


# Arguments naming a file or folder the command writes; a command module's own OUTPUT_ARGS replaces
# these (tune's --tuning file is read and rewritten; elsewhere --tuning is only read).
OUTPUT_ARGS = ("output", "plot", "plot_memory", "hardware_map")


def _paths_named(args: argparse.Namespace) -> list[str]:
    values = [v for k, v in vars(args).items() if k not in args._outputs and not k.startswith("_")]
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    return [str(x) for x in flat if isinstance(x, (str, Path)) and x]


def main(argv: list[str] | None = None) -> int:
    with interrupts.handled():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    command = "?"
    try:
        argv = sys.argv[1:] if argv is None else argv
        command = _command_name(argv) or command
        args = build_parser(only=_command_name(argv)).parse_args(argv)
        # Overflow in host-side parameter math (absurd scales) is refused afterwards as a ModelError.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"mtk\.")
        fsutil.set_inputs(_paths_named(args))
        for name in args._outputs:   # before any work: an output that cannot be written, or that is an input
            out = getattr(args, name, None)
            if out:
                fsutil.check_writable(out)
                if not Path(out).is_dir():
                    fsutil.check_not_input(out, what=f"--{name.replace('_', '-')}")
                elif getattr(args, "force", False):
                    fsutil.check_output_dir(Path(out), force=True)
        with ui.terminal_output(quiet=args.quiet):
            try:
                status = int(args._run(args) or 0)
            finally:   # a signal whose KeyboardInterrupt was swallowed, or turned into another error on its
                interrupts.check()   # way up (TVM's FFI makes one raised in a Python callback a RuntimeError)
        sys.stdout.flush()   # here, where a closed pipe is caught, not at the interpreter's exit
        return status
    except BrokenPipeError as err:
        if _reader_gone(sys.stdout) or _reader_gone(sys.stderr):   # `mtk boards | head -1`: it has all it wanted
            return _pipe_closed()
        return _internal_error(command, f"{type(err).__name__}: {err}")   # a pipe to a tool of mtk's
    except MtkError as err:
        if err.exit_code == INTERNAL_ERROR_EXIT:
            return _internal_error(command, str(err))
        print(f"mtk {command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as err:
        signum = getattr(err, "signum", signal.SIGINT)
        print(f"mtk {command}: {'interrupted' if signum == signal.SIGINT else signal.Signals(signum).name}",
              file=sys.stderr)
        return 128 + signum
    except Exception as err:   # noqa: BLE001 (a bug in mtk: never a traceback, never exit 1 "outputs differ")
        if (user_error := user_path_error(err)) is not None:
            print(f"mtk {command}: error: {user_error}", file=sys.stderr)
            return user_error.exit_code
        if os.environ.get("MTK_TRACEBACK"):
            raise
        return _internal_error(command, f"{type(err).__name__}: {err}")


def _reader_gone(stream: TextIO) -> bool:
    """Whether `stream` is a pipe whose reading end is closed (poll reports an error on its writing end)."""
    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
    except (OSError, ValueError, AttributeError):   # not a real file (pytest's capture)
        return False
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _pipe_closed() -> int:
    """Exit quietly, as git does when its reader goes away (128 + SIGPIPE); what is still buffered for
    the closed pipe goes to /dev/null so that the interpreter's last flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):   # not a real file (pytest's capture)
            pass
    os.close(devnull)
    return 128 + signal.SIGPIPE


def _internal_error(command: str, what: str) -> int:
    print(f"mtk {command}: internal error: {what}\n"
          "  please report this at the mtk issue tracker with the command line and input files "
          "(run with MTK_TRACEBACK=1 for the traceback)", file=sys.stderr)
    return INTERNAL_ERROR_EXIT


if __name__ == "__main__":
    sys.exit(main())
