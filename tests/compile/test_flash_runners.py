"""Flashing physical boards without hardware: the exact west command lines, a fake `west` on PATH
for the tool's failures, fake list_ports entries and a pseudo-terminal as the board's port."""

from __future__ import annotations

import os
import shutil
import sys
import termios
from pathlib import Path

import pytest
import yaml

from mtk.boards import Unit, all_boards, get_board
from mtk.errors import MtkError, TargetError, ToolMissing
from mtk.runners import PyOcdRunner, QemuRunner, RunnerCaps, WestRunner, get_runner, runner_names
from mtk.runners.pyocd import session_options
from harness import RUNNERS_YAML

PHYSICAL = [b for b in all_boards() if b.qemu is None]


@pytest.fixture
def zephyr_build(tmp_path) -> Path:
    """The files of a Zephyr build that flashing reads; returns its ELF."""
    build = tmp_path / "app" / "build"
    (build / "zephyr").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text("")
    (build / "zephyr" / "runners.yaml").write_text(RUNNERS_YAML)
    elf = build / "zephyr" / "zephyr.elf"
    elf.write_bytes(b"\x7fELF")
    return elf


@pytest.fixture
def stlink_ports(usb_ports):
    return lambda *ports: usb_ports(*((device, "0483:374b", serial_number) for device, serial_number in ports))


def west_args(elf: Path, runner: str | None = None, serial_number: str | None = None,
              board: str = "nucleo_f746zg") -> list[str]:
    west = shutil.which("west") or "west"   # the fake one where a test has it: it answers `west flash -H`
    command = WestRunner(get_board(board), runner, serial_number).flash_command(west, elf)
    build = str(elf.parent.parent)
    assert command[:5] == [west, "flash", "--skip-rebuild", "-d", build]
    return command[5:]


def test_the_build_s_default_runner(zephyr_build):
    assert west_args(zephyr_build) == ["-r", "stm32cubeprogrammer"]


@pytest.mark.parametrize("board", [b.name for b in PHYSICAL])
@pytest.mark.parametrize("runner, serial_number, expected", [
    ("stm32cubeprogrammer", "066DFF49", ["-r", "stm32cubeprogrammer", "--conn-modifiers", "sn=066DFF49"]),
    ("openocd", "066DFF49", ["-r", "openocd", "--cmd-pre-init", "adapter serial 066DFF49"]),
    ("jlink", "000683123456", ["-r", "jlink", "--dev-id", "000683123456"]),
    ("openocd", None, ["-r", "openocd"]),
])
def test_each_runner_picks_the_probe_its_own_way(zephyr_build, fake_west, board, runner, serial_number, expected):
    runners = get_board(board).runners
    (zephyr_build.parent / "runners.yaml").write_text(yaml.safe_dump({"runners": list(runners),
                                                                      "flash-runner": runners[0]}))
    assert west_args(zephyr_build, None, serial_number, board)[:2] == ["-r", runners[0]]
    if runner not in runners:   # e.g. STM32CubeProgrammer for a Raspberry Pi Pico
        with pytest.raises(MtkError, match=f"runner '{runner}' is not configured for {board}"):
            west_args(zephyr_build, runner, serial_number, board)
        return
    assert west_args(zephyr_build, runner, serial_number, board) == expected


def test_west_s_dev_id_wins_where_a_runner_takes_it(zephyr_build, fake_west, monkeypatch):
    monkeypatch.setenv("FAKE_WEST_DEV_ID", "openocd")   # a Zephyr whose openocd runner took --dev-id
    assert west_args(zephyr_build, "openocd", "066DFF49") == ["-r", "openocd", "--dev-id", "066DFF49"]
    assert not fake_west.exists()   # asking west for a runner's options flashes nothing


def test_a_runner_with_no_way_to_pick_a_probe_is_refused(zephyr_build, fake_west):
    (zephyr_build.parent / "runners.yaml").write_text(yaml.safe_dump({"runners": ["uf2"], "flash-runner": "uf2"}))
    assert west_args(zephyr_build) == ["-r", "uf2"]
    with pytest.raises(MtkError, match="west's runner 'uf2' cannot pick a probe by serial number"):
        west_args(zephyr_build, None, "E6614C311B")


def test_a_runner_the_board_is_not_configured_for_is_refused(zephyr_build):
    with pytest.raises(MtkError, match="runner 'nrfjprog' is not configured for nucleo_f746zg") as err:
        west_args(zephyr_build, "nrfjprog")
    assert "stm32cubeprogrammer, openocd, jlink" in str(err.value)


def test_a_build_without_runners_needs_one_named(zephyr_build):
    (zephyr_build.parent / "runners.yaml").unlink()
    with pytest.raises(TargetError, match="no flash runner"):
        west_args(zephyr_build)
    assert west_args(zephyr_build, "openocd") == ["-r", "openocd"]


def test_an_elf_outside_a_zephyr_build_is_refused(tmp_path):
    with pytest.raises(TargetError, match="not in a Zephyr build folder"):
        west_args(tmp_path / "zephyr" / "zephyr.elf")


@pytest.mark.parametrize("board", [b.name for b in PHYSICAL])
def test_runner_choice_per_board(board):
    b = get_board(board)
    assert isinstance(get_runner(b), WestRunner) and get_runner(b).zephyr_runner is None
    assert get_runner(b, "west").zephyr_runner is None
    for runner in b.runners:
        assert get_runner(b, runner).zephyr_runner == runner
    assert isinstance(get_runner(b, "pyocd", "ABC123"), PyOcdRunner)
    assert session_options(b, "ABC123") == {"unique_id": "ABC123", "target_override": b.pyocd_target,
                                            "blocking": False, "return_first": False,
                                            "connect_mode": "under-reset"}
    assert runner_names(b)[:2] == ["west", b.runners[0]] and runner_names(b)[-1] == "pyocd"


@pytest.mark.parametrize("board", [b.name for b in PHYSICAL])
def test_flash_runners_declare_what_they_can_do(board):
    for runner in (get_runner(get_board(board)), get_runner(get_board(board), "pyocd")):
        assert runner.caps == RunnerCaps(unit=Unit.CYCLES, exit_status=False, flashes=True, selects_probe=True,
                                         sets_baud=True)


def test_qemu_runner_declares_instructions_an_exit_status_and_its_cycle_model():
    board = get_board("mps2/an386")
    assert get_runner(board).caps == RunnerCaps(unit=Unit.INSTRUCTIONS, exit_status=True, estimates_cycles=True,
                                                paced=True)
    assert not get_runner(board, cycles=None).caps.estimates_cycles
    assert board.caps.unit == Unit.INSTRUCTIONS and get_board("nucleo_f746zg").caps.unit == Unit.CYCLES


def test_qemu_boards_run_in_qemu_whatever_the_platform():
    board = get_board("qemu_cortex_m3")
    assert isinstance(get_runner(board), QemuRunner) and isinstance(get_runner(board, "qemu"), QemuRunner)
    with pytest.raises(MtkError, match="choose one of: qemu"):
        get_runner(board, "openocd")
    with pytest.raises(MtkError, match="physical boards"):
        get_runner(board, serial_number="ABC")


def test_unknown_runners_and_unsafe_serial_numbers_are_refused():
    board = get_board("nucleo_f746zg")
    with pytest.raises(MtkError, match="runner 'st-flash' cannot run nucleo_f746zg"):
        get_runner(board, "st-flash")
    with pytest.raises(MtkError, match="serial number is letters"):
        get_runner(board, "openocd", "x; shutdown")


def test_pyocd_missing_is_a_tool_error(zephyr_build, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyocd", None)
    with pytest.raises(ToolMissing, match="pyOCD is not installed") as err:
        PyOcdRunner(get_board("nucleo_f746zg"), "ABC").flash(zephyr_build)
    assert err.value.exit_code == 3 and "pip install pyocd" in str(err.value)


def test_west_flash_runs_the_command_built(zephyr_build, fake_west):
    WestRunner(get_board("nucleo_f746zg"), "openocd", "ABC").flash(zephyr_build)
    assert fake_west.read_text().split() == [
        "flash", "--skip-rebuild", "-d", str(zephyr_build.parent.parent), "-r", "openocd",
        "--cmd-pre-init", "adapter", "serial", "ABC"]


@pytest.mark.parametrize("output", [
    "FATAL ERROR: required program STM32_Programmer_CLI not found; install it or add its location to PATH\n",
    "FATAL ERROR: one or more Python dependencies were missing; see the getting started guide for details on "
    "how to fix\n"])   # Zephyr 4.2's west when a runner's package (pylink for jlink) is not installed
def test_a_missing_flash_tool_is_a_tool_error(zephyr_build, fake_west, monkeypatch, output):
    monkeypatch.setenv("FAKE_WEST_STATUS", "1")
    monkeypatch.setenv("FAKE_WEST_OUTPUT", output)
    with pytest.raises(ToolMissing, match="(?s)west flash failed for nucleo_f746zg.*FATAL ERROR") as err:
        WestRunner(get_board("nucleo_f746zg")).flash(zephyr_build)
    assert "rerun by hand:" in str(err.value)


def test_a_failed_flash_is_a_target_error(zephyr_build, fake_west, monkeypatch):
    monkeypatch.setenv("FAKE_WEST_STATUS", "1")
    monkeypatch.setenv("FAKE_WEST_OUTPUT", "Error: No debug probe detected.\n")
    with pytest.raises(TargetError, match="No debug probe detected") as err:
        WestRunner(get_board("nucleo_f746zg")).flash(zephyr_build)
    assert err.value.exit_code == 4


def test_no_west_is_a_tool_error(zephyr_build, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissing, match="'west' is not on PATH"):
        WestRunner(get_board("nucleo_f746zg")).flash(zephyr_build)


def test_no_board_attached_fails_before_flashing(zephyr_build, fake_west, stlink_ports):
    stlink_ports()
    with pytest.raises(TargetError, match="no serial port for nucleo_f746zg"):
        get_runner(get_board("nucleo_f746zg")).start(zephyr_build)
    assert not fake_west.exists()


def test_several_boards_fail_before_flashing(zephyr_build, fake_west, stlink_ports):
    stlink_ports(("/dev/ttyACM0", "AAA"), ("/dev/ttyACM1", "BBB"))
    with pytest.raises(TargetError, match="several serial ports"):
        get_runner(get_board("nucleo_f746zg")).start(zephyr_build)
    assert not fake_west.exists()


def test_start_flashes_the_board_whose_port_it_opened(zephyr_build, fake_west, stlink_ports, board_tty):
    device, master = board_tty
    stlink_ports(("/dev/ttyACM0", "AAA"), (device, "BBB"))
    with get_runner(get_board("nucleo_f746zg"), serial_number="BBB").start(zephyr_build) as session:
        assert "--conn-modifiers sn=BBB" in fake_west.read_text()
        os.write(master, b"m-init-done\r\n")
        assert session.link.read_line(2) == "m-init-done"


def test_start_opens_the_console_at_the_baud_rate_given(zephyr_build, fake_west, stlink_ports, board_tty):
    """An MLPerf Tiny DUT's console runs at its benchmark's rate: the run loop passes it, not a mutated runner."""
    device, _ = board_tty
    stlink_ports((device, "ONLY1"))
    with get_runner(get_board("nucleo_f746zg")).start(zephyr_build, 921600):
        fd = os.open(device, os.O_RDONLY | os.O_NOCTTY)
        try:
            assert termios.tcgetattr(fd)[5] == termios.B921600   # the output speed the port was opened at
        finally:
            os.close(fd)


def test_the_single_board_s_serial_number_goes_to_the_flash_tool(zephyr_build, fake_west, stlink_ports, board_tty):
    stlink_ports((board_tty[0], "ONLY1"))
    get_runner(get_board("nucleo_f746zg"), "jlink").start(zephyr_build).close()
    assert fake_west.read_text().split()[-2:] == ["--dev-id", "ONLY1"]


def test_a_busy_port_fails_before_flashing(zephyr_build, fake_west, stlink_ports, board_tty):
    stlink_ports((board_tty[0], "AAA"))
    with get_runner(get_board("nucleo_f746zg")).start(zephyr_build):
        with pytest.raises(TargetError, match="in use by another program"):
            get_runner(get_board("nucleo_f746zg")).start(zephyr_build)
    assert len(fake_west.read_text().splitlines()) == 1


def test_a_failed_flash_releases_the_port(zephyr_build, fake_west, stlink_ports, board_tty, monkeypatch):
    stlink_ports((board_tty[0], "AAA"))
    monkeypatch.setenv("FAKE_WEST_STATUS", "2")
    with pytest.raises(TargetError):
        get_runner(get_board("nucleo_f746zg")).start(zephyr_build)
    monkeypatch.setenv("FAKE_WEST_STATUS", "0")
    get_runner(get_board("nucleo_f746zg")).start(zephyr_build).close()
