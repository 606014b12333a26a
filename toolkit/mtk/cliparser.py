"""mtk's argparse parser: suggestions for mistyped commands, options and choices, errors under the
usage line of the subcommand that failed, and old option spellings accepted but not shown."""

from __future__ import annotations

import argparse
import copy
import difflib
from typing import Any, Sequence

from .boards import did_you_mean, get_board
from .errors import MtkError

# An option's old spelling -> its name today: still accepted wherever that option exists, never shown.
OLD_SPELLINGS: dict[str, str] = {
    "--data": "--input",               # validate's samples, as run's
    "--cache": "--tuning",             # tune's tuning file, as compile/run/bench/validate's
    "--calibration": "--calib-method",  # quantize's, apart from --calib DATA
}


def close_matches(word: str, candidates: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(word, list(candidates), n=2, cutoff=0.6)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """--help without the old spellings of an option."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        hidden = getattr(action, "old_spellings", ())
        if hidden:
            action = copy.copy(action)
            action.option_strings = [s for s in action.option_strings if s not in hidden]
        return super()._format_action_invocation(action)


class MtkParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors say what was probably meant, in the parser that failed."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            failing: MtkParser = getattr(parsed, "_parser", self)
            failing.error(f"unrecognized arguments: {' '.join(extra)}" + failing._option_suggestion(extra))
        return parsed

    def _option_suggestion(self, extra: list[str]) -> str:
        """"; did you mean --board?" for the first unknown option in `extra` that looks like one of ours."""
        names = {spelling: OLD_SPELLINGS.get(spelling, spelling) for spelling in self._option_string_actions}
        for word in extra:
            if word.startswith("-"):
                matches = close_matches(word.partition("=")[0], list(names))
                return did_you_mean(list(dict.fromkeys(names[m] for m in matches)))
        return ""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is None or value in action.choices:
            return
        choices = [str(c) for c in action.choices]
        suggestion = did_you_mean(close_matches(str(value), choices)) or f" (choose from {', '.join(choices)})"
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(None, f"unknown command {value!r}{suggestion}")
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{suggestion}")

    def accept_old_spellings(self) -> None:
        """Let each option of OLD_SPELLINGS be given by its old spelling too (hidden from --help)."""
        for old, new in OLD_SPELLINGS.items():
            action = self._option_string_actions.get(new)
            if action is not None and old not in self._option_string_actions:
                action.option_strings.append(old)
                action.old_spellings = (*getattr(action, "old_spellings", ()), old)
                self._option_string_actions[old] = action


def board_name(name: str) -> str:
    """A --board value, checked while parsing: an unknown board is an argument error, with suggestions."""
    try:
        get_board(name)
    except MtkError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return name
