"""Run MLPerf Tiny's stock host runner (mlcommons/tiny benchmark/runner/main.py) against a DUT on a
serial port that has no USB ids, such as the pty of `mtk serve`.

The runner only considers serial ports whose USB VID:PID its devices file lists (device_manager.py
scans `serial.tools.list_ports.comports()`); a pty has none. This wrapper changes nothing else: it
adds the port to what `comports()` lists, with the ids of the devices file's DUT, then runs the
runner's script unmodified in this process.

    cd tiny/benchmark/runner
    python3 /path/to/mtk/mlperf_ports.py --port /dev/pts/7 main.py -d devices_kws_ic_vww.yaml -m p -s datasets

Run it with the runner's Python (its requirements installed); it needs only pyserial, not mtk.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys

from serial.tools import list_ports, list_ports_common

ST_LINK = "0483:374b"   # the DUT (l4r5zi) in the runner's devices_*.yaml


def listed_port(device: str, vid_pid: str) -> list_ports_common.ListPortInfo:
    info = list_ports_common.ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid = (int(part, 16) for part in vid_pid.split(":"))
    info.description = info.product = "mtk DUT"
    return info


def add_port(device: str, vid_pid: str) -> None:
    """Make `serial.tools.list_ports.comports()` also list `device`, with USB ids `vid_pid`."""
    real_comports = list_ports.comports
    extra = listed_port(device, vid_pid)

    def comports(include_links: bool = False) -> list[list_ports_common.ListPortInfo]:
        return [p for p in real_comports(include_links) if p.device != device] + [extra]

    list_ports.comports = comports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", required=True, help="the DUT's serial port (e.g. the pty `mtk serve` printed)")
    parser.add_argument("--usb", default=ST_LINK, metavar="VID:PID",
                        help=f"the USB ids the devices file gives the DUT (default: {ST_LINK}, the stock files' l4r5zi)")
    parser.add_argument("script", help="the runner's main.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the runner's arguments")
    args = parser.parse_args()
    add_port(args.port, args.usb)
    sys.argv = [args.script, *args.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    runpy.run_path(args.script, run_name="__main__")


if __name__ == "__main__":
    main()
