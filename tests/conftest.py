from __future__ import annotations

import os
import signal
import stat
import sys
from pathlib import Path

import pytest
import serial.tools.list_ports
from serial.tools.list_ports_common import ListPortInfo

# The helpers here for the tests of every folder; the tests in tests/target import the models and helpers of the
# tests in tests/compile and tests/unit they run on a target.
TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS), str(TESTS / "compile"), str(TESTS / "unit")]

from checkout import SHARED_MODELS, shared_models  # noqa: E402

# The marks a test's folder gives it, and the marks a test there may not carry (with where such a test belongs)
FOLDER_MARKS = {"unit": ("unit",), "compile": ("compile",), "target": ("target", "slow")}
MISPLACED = {
    "unit": {"slow": "tests/compile or tests/target", "qemu": "tests/target", "zephyr": "tests/target"},
    "compile": {"qemu": "tests/target", "zephyr": "tests/target"},
    "target": {},
}


@pytest.fixture(scope="session")
def shared_model_paths() -> list[Path]:
    models = shared_models()
    if not models:
        pytest.skip(f"no models in {SHARED_MODELS}")
    return models


@pytest.fixture
def board_tty():
    """A real serial device standing in for a board's port: a pseudo-terminal's slave end.
    Yields (its path, the master fd: what is written there, the port reads)."""
    master, slave = os.openpty()
    yield os.ttyname(slave), master
    os.close(master)
    os.close(slave)


FAKE_WEST = f"""#!{sys.executable}
import os, sys
args = sys.argv[1:]
if "-H" in args:   # a runner's own options, as `west flash -H -d BUILD -r RUNNER` lists them
    runner = args[args.index("-r") + 1]
    takes_dev_id = runner in os.environ["FAKE_WEST_DEV_ID"].split(",")
    print(f"{{runner}} options:\\n" + ("  -i DEV_ID, --dev-id DEV_ID\\n" if takes_dev_id else "") + "  --erase")
    sys.exit(0)
with open(os.environ["FAKE_WEST_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if args[0] == "build" and os.environ.get("FAKE_WEST_ELF"):   # the ELF in the build folder (-d)
    elf = os.path.join(args[args.index("-d") + 1], "zephyr", "zephyr.elf")
    os.makedirs(os.path.dirname(elf), exist_ok=True)
    open(elf, "wb").write(os.environ["FAKE_WEST_ELF"].encode())
sys.stdout.write(os.environ.get("FAKE_WEST_OUTPUT", ""))
sys.exit(int(os.environ.get("FAKE_WEST_STATUS", "0")))
"""
# The runners of Zephyr 4.2's west that take --dev-id (RunnerCaps(dev_id=True)), among those boards use
WEST_DEV_ID_RUNNERS = "jlink,pyocd,nrfjprog,nrfutil,linkserver,probe-rs,dfu-util,stlink_gdbserver,spsdk"


@pytest.fixture
def fake_west(tmp_path, monkeypatch) -> Path:
    """A `west` on PATH that logs its arguments; FAKE_WEST_STATUS/OUTPUT set how it ends, FAKE_WEST_ELF
    the content of the zephyr.elf a `west build` leaves, FAKE_WEST_DEV_ID which runners its `west flash -H`
    shows with --dev-id."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    west = bin_dir / "west"
    west.write_text(FAKE_WEST)
    west.chmod(west.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "west.log"
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_WEST_LOG", str(log))
    monkeypatch.setenv("FAKE_WEST_DEV_ID", WEST_DEV_ID_RUNNERS)
    return log


@pytest.fixture
def usb_ports(monkeypatch):
    """attach(("/dev/ttyACM0", "0483:374b", "066DFF49"), ...): the USB serial ports list_ports finds."""
    def attach(*ports: tuple[str, str, str]) -> None:
        infos = []
        for device, vid_pid, serial_number in ports:
            info = ListPortInfo(device, skip_link_detection=True)
            info.vid, info.pid = (int(n, 16) for n in vid_pid.split(":"))
            info.serial_number = serial_number
            infos.append(info)
        monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: infos)
    return attach


@pytest.fixture
def one_stlink(monkeypatch):
    """One ST-LINK attached (its serial port)."""
    info = ListPortInfo("/dev/ttyACM0", skip_link_detection=True)
    info.vid, info.pid, info.serial_number, info.product = 0x0483, 0x374B, "066DFF49", "STM32 STLink"
    monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: [info])


def folder_of(item: pytest.Item) -> str:
    """unit, compile or target: the folder under tests/ the test's file is in."""
    parts = item.path.relative_to(TESTS).parts
    if len(parts) < 2 or parts[0] not in FOLDER_MARKS:
        raise pytest.UsageError(f"{item.nodeid}: a test file belongs in tests/unit, tests/compile or tests/target")
    return parts[0]


def pytest_collection_modifyitems(items) -> None:
    """The folder gives the marks. tests/target (QEMU, Zephyr, labgrid: firmware on a target) is slow, so
    `pytest -m "not slow"` is the fast inner loop; in tests/compile the tests that compile whole models are
    marked slow one by one; tests/unit has no slow test."""
    for item in items:
        folder = folder_of(item)
        for name in FOLDER_MARKS[folder]:
            item.add_marker(name)
        for name, place in MISPLACED[folder].items():
            if item.get_closest_marker(name) is not None:
                raise pytest.UsageError(f"{item.nodeid}: a test marked {name} belongs in {place}")


def pytest_configure(config: pytest.Config) -> None:
    """The tests send Ctrl-C as at a terminal: a suite started as a shell's background job (`.ci/run &`) inherits
    SIGINT ignored, which mtk keeps ignored (interrupts.py); its Ctrl-C tests then see nothing."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.items and all(folder_of(item) == "unit" for item in session.items) and "tvm" in sys.modules:
        raise pytest.UsageError("collecting tests/unit imported tvm: a test file that imports it belongs in "
                                "tests/compile")


@pytest.fixture(autouse=True)
def unit_tests_import_no_tvm(request):
    """A test in tests/unit imports no TVM (seen when TVM was not loaded before it, as in `pytest tests/unit`)."""
    checked = folder_of(request.node) == "unit" and "tvm" not in sys.modules
    yield
    if checked and "tvm" in sys.modules:
        pytest.fail(f"{request.node.nodeid} imported tvm: its place is tests/compile", pytrace=False)


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory, monkeypatch):
    """Each test its own $XDG_CACHE_HOME: no firmware another test built is reused (buildcache.py)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
