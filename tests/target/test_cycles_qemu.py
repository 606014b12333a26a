"""The cycle model in QEMU: instruction sequences whose cycles the Arm TRMs state, assembled and run under the
real plugin (mtk.cycles.sequences), and models run with it (instruction counts, flash wait states, board estimates)."""

from __future__ import annotations

import json
import re

import pytest

from mtk.boards import get_board
from mtk.cycles import plugin, sequences
from mtk.cycles.emulate import qemu_board_for
from mtk.cycles.model import CycleModel

LOADS = "ldr r1, [r0, r2]\n ldr r4, [r0]\n ldr r5, [r0, #4]"    # M4 TRM 3.3.2's LDR R0,[R1,R5]; LDR R1,[R2]; LDR R2,[R3,#4]
LOAD_STORE = "ldr r1, [r0, r2]\n str r1, [r0, #20]"             # ... LDR R0,[R1,R2]; STR R0,[R3,#20]
LDM = {"ldm1": "ldm r0!, {r1}", "ldm4": "ldm r0!, {r1-r4}", "ldm8": "ldm r0, {r0-r7}"}
SMLAD4 = "\n".join(["smlad r1, r4, r5, r1"] * 4)
TAKEN = "cmp r0, r0\n beq 1f\n nop\n .p2align 2\n1:"               # to a word-aligned target
UNTAKEN = "cmp r0, r0\n bne 1f\n1:"
DIVIDE = "sdiv r1, r2, r3"
ARMV7M = {"loads": (LOADS, 4), "load_store": (LOAD_STORE, 3), "ldm1": (LDM["ldm1"], 2), "ldm4": (LDM["ldm4"], 5),
          "ldm8": (LDM["ldm8"], 9), "taken": (TAKEN, 3), "untaken": (UNTAKEN, 2), "divide": (DIVIDE, 12),
          "address_stall": ("adds r0, #0\n ldr r1, [r0]", 4), "it_folded": ("adds r1, #1\n it eq\n moveq r4, r5", 2),
          "taken_unaligned_32bit": ("cmp r0, r0\n beq 1f\n nop\n .p2align 2\n nop\n1: add.w r1, r1, r1", 5)}

ARMV6M = {"loads": ("ldr r1, [r0]\n ldr r4, [r0, #4]", 4), "ldm1": (LDM["ldm1"], 2), "ldm4": (LDM["ldm4"], 5),
          "ldm8": (LDM["ldm8"], 9), "multiply": ("muls r1, r4, r1", 1), "untaken": (UNTAKEN, 2)}

EXPECTED = {
    "cortex-m4": {**ARMV7M, "smlad_chain": (SMLAD4, 4), "mla": ("mla r1, r4, r5, r1", 2),
                  "smlal": ("smlal r4, r5, r2, r3", 1)},
    "cortex-m3": {**ARMV7M, "smull": ("smull r4, r5, r2, r3", 3), "mla": ("mla r1, r4, r5, r1", 2)},
    "cortex-m33": {**ARMV7M, "loads": (LOADS, 3), "load_store": (LOAD_STORE, 2), "address_stall": ("adds r0, #0\n ldr r1, [r0]", 3),
                   "load_use": ("ldr r1, [r0]\n adds r1, #1", 3), "taken": (TAKEN, 2), "untaken": (UNTAKEN, 1),
                   "taken_unaligned_32bit": ("cmp r0, r0\n beq 1f\n nop\n .p2align 2\n nop\n1: add.w r1, r1, r1", 4),
                   "divide": (DIVIDE, 11), "smlad_chain": (SMLAD4, 4),
                   "pair_16bit": ("adds r1, #1\n adds r4, #1", 1), "pair_32bit": ("add.w r1, r1, #1\n add.w r4, r4, #1", 2)},
    "cortex-m0plus": {**ARMV6M, "taken": (TAKEN, 3)},
    "cortex-m0": {**ARMV6M, "taken": (TAKEN, 4)},
    "cortex-m7": {"dual_issue": ("add r1, r2, r3\n add r4, r5, r6", 1), "dependent": ("add r1, r2, r3\n add r4, r1, r6", 2),
                  "two_multiplies": ("mul r1, r2, r3\n mul r4, r5, r6", 2), "load_alu": ("ldr r1, [r0]\n add r4, r5, r6", 1),
                  "load_use": ("ldr r1, [r0]\n add r4, r1, r6", 3), "load_store_data": ("ldr r1, [r0]\n str r1, [r0, #4]", 2),
                  "smlad_chain": (SMLAD4, 4), "ldm1": (LDM["ldm1"], 2), "ldm4": (LDM["ldm4"], 3), "ldm8": (LDM["ldm8"], 5),
                  "taken_first_time": (TAKEN, 7), "untaken": (UNTAKEN, 1), "divide": (DIVIDE, 12)},
    "cortex-m55": {"mve_load_mac": ("vldrb.s8 q0, [r0]\n vmladava.s8 r4, q0, q0", 3),
                   "mve_load_mac_chain": ("vldrb.s8 q0, [r0]\n vmladava.s8 r4, q0, q0\n vldrb.s8 q1, [r0, #16]\n"
                                          " vmladava.s8 r4, q1, q1", 5),
                   "mve_two_macs": ("vmladava.s8 r4, q0, q0\n vmladava.s8 r6, q1, q1", 4),
                   "mve_two_loads": ("vldrb.s8 q0, [r0]\n vldrb.s8 q1, [r0, #16]", 4),
                   "smlad_chain": (SMLAD4, 4), "ldm1": (LDM["ldm1"], 2), "ldm4": (LDM["ldm4"], 3), "ldm8": (LDM["ldm8"], 5),
                   "taken": (TAKEN, 3), "untaken": (UNTAKEN, 2), "divide": (DIVIDE, 12), "load_use": ("ldr r1, [r0]\n adds r1, #1", 3)},
}


def _firmware_run(elf, cycles):
    from mtk.runners import get_runner
    from mtk.transport.protocol import FirmwareClient
    with get_runner(get_board("mps2/an386"), cycles=cycles).start(elf) as session:
        client = FirmwareClient(session.link)
        client.wait_boot()
        client.load_input(bytes(range(64)))
        stats, layers = client.stats(3), client.layers()
        measured = session.cycles.take_inferences() if session.cycles else None
        layer_cycles = session.cycles.last_layers() if session.cycles else None
        client.exit(0)
        assert session.wait_exit(5) == 0
    return stats, layers, measured, layer_cycles


@pytest.fixture(scope="module")
def fake_firmware(tmp_path_factory):
    from test_qemu import build
    return build("mps2/an386", tmp_path_factory.mktemp("fw"), profile=True)


FLASH_LOADS = "\n".join(f"ldr r1, [r4, #{offset}]" for offset in (0, 32, 64, 96))   # four 32-byte lines
DIGITS = plugin.SOURCE.parents[3] / "models" / "digits_cnn_int8.tflite"


@pytest.mark.qemu
@pytest.mark.parametrize("cpu", list(EXPECTED))
def test_trm_sequences(cpu):
    expected = EXPECTED[cpu]
    measured = sequences.measure(cpu, {name: body for name, (body, _) in expected.items()})
    assert measured == {name: cycles for name, (_, cycles) in expected.items()}


@pytest.mark.qemu
def test_sequences_give_the_same_cycles_run_after_run():
    body = {"mix": "ldr r1, [r0]\n smlad r1, r4, r5, r1\n cmp r1, #0\n bne 1f\n nop\n1: sdiv r1, r2, r3"}
    assert sequences.measure("cortex-m4", body) == sequences.measure("cortex-m4", body)


@pytest.mark.qemu
def test_sequence_cli_prints_the_cycles(capsys):
    assert sequences.main(["cortex-m4", "ldr r1, [r0]", "ldr r4, [r0, #4]"]) == 0
    assert capsys.readouterr().out == "3\n"


@pytest.mark.qemu
def test_model_leaves_instruction_counts_untouched_and_repeats(fake_firmware):
    stats_off, layers_off, none, _ = _firmware_run(fake_firmware, None)
    stats, layers, measured, layer_cycles = _firmware_run(fake_firmware, True)
    _, _, measured_again, layer_cycles_again = _firmware_run(fake_firmware, True)
    assert none is None
    assert (stats, layers) == (stats_off, layers_off)
    assert measured == measured_again and layer_cycles == layer_cycles_again
    assert len(measured) == 3 and len({m.cycles for m in measured}) == 1
    insns = measured[0].insns
    assert abs(insns - stats.median) <= 100 and measured[0].cycles > insns
    assert sorted(layer_cycles) == [i for i, units in enumerate(layers) if units]
    assert sum(m.insns for m in layer_cycles.values()) <= insns


@pytest.mark.qemu
@pytest.mark.parametrize("cpu, board, wait_states", [("cortex-m4", "nucleo_l4r5zi", 5), ("cortex-m7", "nucleo_f746zg", 7)])
def test_loads_from_flash_wait_unless_cached(cpu, board, wait_states):
    flash, ram = "mov.w r4, #0x1000\n", "add.w r4, r0, #0\n"   # the QEMU board's code memory (the board's flash); RAM
    twice = (FLASH_LOADS.replace("r4, #", "r4, #512+") + "\n") * 2   # 32-bit loads in both: the same code lines
    measured = sequences.measure(cpu, {"flash": flash + FLASH_LOADS, "ram": ram + FLASH_LOADS,
                                       "flash_twice": flash + twice, "ram_twice": ram + twice}, emulate=board)
    assert measured["flash"] - measured["ram"] == 4 * wait_states
    assert measured["flash_twice"] - measured["ram_twice"] == 4 * wait_states   # the second pass hits the cache
    own = sequences.measure(cpu, {"flash": flash + FLASH_LOADS, "ram": ram + FLASH_LOADS})   # QEMU's board: zero wait
    assert own["flash"] == own["ram"] <= measured["ram"]   # the L4R5's code lines wait out its prefetch


def _pointer(cpu: str, address: int) -> str:
    """r4 = address, in the same two instructions whatever the address (a power of two on the M0+)."""
    if cpu == "cortex-m0plus":
        shift = (address & -address).bit_length() - 1
        return f"movs r4, #{address >> shift}\nlsls r4, r4, #{shift}\n"
    return f"movw r4, #{address & 0xFFFF}\nmovt r4, #{address >> 16}\n"


@pytest.mark.qemu
@pytest.mark.parametrize("cpu, board, fills, again", [
    ("cortex-m0plus", "nucleo_g0b1re", 4 * 2, 4 * 2),          # no data cache: each load waits
    ("cortex-m4", "nucleo_l4r5zi", 4 * 5, 0),                  # the ART reads (and caches) 64 bits at a time
    ("cortex-m0plus", "rpi_pico", 4 * 112, 0),                 # four XIP lines, an SSI transfer each
    ("cortex-m33", "rpi_pico2/rp2350a/m33", 108 + 3 * 48, 0),  # the QMI extends its burst to the next three
])
def test_loads_stream_through_a_flash_line_by_line(cpu, board, fills, again):
    qemu = get_board(qemu_board_for(cpu)).qemu
    loads = "\n".join(f"ldr r1, [r4, #{offset}]" for offset in (0, 8, 16, 24)) + "\n"   # four 8-byte lines
    measured = sequences.measure(cpu, {"flash": _pointer(cpu, qemu.code.base + 0x1000) + loads,
                                       "ram": _pointer(cpu, qemu.ram.base) + loads,
                                       "flash_twice": _pointer(cpu, qemu.code.base + 0x2000) + loads * 2,
                                       "ram_twice": _pointer(cpu, qemu.ram.base) + loads * 2}, emulate=board)
    assert measured["flash"] - measured["ram"] == fills
    assert measured["flash_twice"] - measured["ram_twice"] == fills + again   # the XIP cache holds them the second time


@pytest.mark.qemu
def test_memory_waits_are_counted_apart_for_fetches_and_loads():
    """On the L4R5 four loads from four 8-byte flash lines wait 4 x 5 cycles for data (the ART's data cache holds
    them the second time), loads from RAM none; a line of four 16-bit NOPs waits 2 for the rest of its prefetched
    read (16 lines). QEMU's own board waits for nothing: the waits are all the L4R5 costs more."""
    qemu = get_board(qemu_board_for("cortex-m4")).qemu
    loads = "\n".join(f"ldr r1, [r4, #{offset}]" for offset in (0, 8, 16, 24)) + "\n"
    bodies = {"flash": _pointer("cortex-m4", qemu.code.base + 0x1000) + loads * 2,
              "ram": _pointer("cortex-m4", qemu.ram.base) + loads * 2, "nop16": "\n".join(["nop"] * 64)}
    l4r5 = sequences.measure_figures("cortex-m4", bodies, emulate="nucleo_l4r5zi")
    own = sequences.measure_figures("cortex-m4", bodies)
    assert (l4r5["flash"].data_waits, l4r5["ram"].data_waits, l4r5["nop16"].data_waits) == (4 * 5, 0, 0)
    assert l4r5["nop16"].fetch_waits == 16 * 2
    assert all((m.fetch_waits, m.data_waits) == (0, 0) for m in own.values())
    assert {name: m.cycles - own[name].cycles for name, m in l4r5.items()} == \
        {name: m.fetch_waits + m.data_waits for name, m in l4r5.items()}


@pytest.mark.qemu
def test_a_prefetched_line_waits_for_what_of_its_read_the_core_does_not_cover():
    """The L4R5's ART reads the next 64-bit line while the core runs the last one: 5 wait states make a
    read 6 cycles, a line of four 16-bit NOPs (4 cycles) waits 2 more, one of two 32-bit NOPs 4 (16 lines
    each; the first line's miss is the empty function's too). The G0B1's 3-cycle reads hide under 4 NOPs."""
    nops16, nops32 = "\n".join(["nop"] * 64), "\n".join(["nop.w"] * 32)
    assert sequences.measure("cortex-m4", {"nop16": nops16, "nop32": nops32}, emulate="nucleo_l4r5zi") == \
        {"nop16": 64 + 16 * 2, "nop32": 32 + 16 * 4}
    assert sequences.measure("cortex-m0plus", {"nop16": nops16}, emulate="nucleo_g0b1re") == {"nop16": 64}


@pytest.mark.qemu
def test_the_u575_icache_is_2_way_and_serves_loads():
    """mtk's applications keep the U575's 8 KB ICACHE 2-way: two flash lines 8 KB apart (one set) stay in it,
    three taken in turn evict one another (least recently used) and miss each time; loads within one 16-byte
    line fill it once."""
    qemu = get_board(qemu_board_for("cortex-m33")).qemu
    two = "add.w r5, r4, #8192\n" + "ldr r1, [r4]\nldr r1, [r5]\n" * 2
    three = "add.w r5, r4, #8192\nadd.w r6, r4, #16384\n" + "ldr r1, [r4]\nldr r1, [r5]\nldr r1, [r6]\n" * 2
    within = "add.w r5, r4, #8\n" + "ldr r1, [r4]\nldr r1, [r5]\n" * 2
    bodies = {"two": (two, 0x1000), "three": (three, 0x1100), "within": (within, 0x1200)}   # sets of their own
    measured = sequences.measure("cortex-m33", {   # (one run: the cache keeps what each sequence left)
        **{name: _pointer("cortex-m33", qemu.code.base + at) + body for name, (body, at) in bodies.items()},
        **{f"{name}_ram": _pointer("cortex-m33", qemu.ram.base) + body for name, (body, _) in bodies.items()}},
        emulate="nucleo_u575zi_q")
    assert measured["two"] - measured["two_ram"] == 2 * 4
    assert measured["three"] - measured["three_ram"] == 6 * 4
    assert measured["within"] - measured["within_ram"] == 4


@pytest.mark.qemu
def test_run_emulating_a_board_reports_its_estimate(capsys):
    from mtk.cli import main
    assert main(["run", str(DIGITS), "--board", "nucleo_u575zi_q", "--emulate", "-n", "2", "--json", "--profile"]) == 0
    emulated = json.loads(capsys.readouterr().out)
    assert main(["bench", str(DIGITS), "--board", "mps2/an505", "-n", "2", "--json", "--profile"]) == 0
    [own] = json.loads(capsys.readouterr().out)
    estimate, zero_wait = emulated["estimated_cycles"], own["estimated_cycles"]
    assert (estimate["board"], estimate["emulated_on"], estimate["clock_hz"], estimate["unit"]) == \
        ("nucleo_u575zi_q", "mps2/an505", 160_000_000, "cycles (estimated)")
    assert (zero_wait["board"], zero_wait["emulated_on"], zero_wait["clock_hz"]) == ("mps2/an505", None, 20_000_000)
    # the same code, the same instructions: the U575 compiles as the an505 does (a board with dear code misses and no
    # code RAM would not: its kernels take variants whose code fits its cache, compiler.code_fitting_tuning)
    assert emulated["per_inference"] == own["per_inference"]
    assert estimate["median"] > zero_wait["median"] > own["per_inference"]["median"]   # flash waits; CPI > 1
    assert estimate["time_ms_at_clock"] == round(estimate["median"] / 160e3, 4)
    assert [layer["index"] for layer in estimate["layers"]] == \
        [layer["index"] for layer in emulated["layers"] if layer["units"]]
    units = {layer["index"]: layer["units"] for layer in emulated["layers"]}
    # the layers' cycles come from the profiling build, whose hooks move code and constants across flash lines:
    # refills more or fewer than in the plain build whose total this is (1.6 % on this small model at the U575's
    # flash timing)
    assert abs(sum(layer["cycles"] for layer in estimate["layers"]) - estimate["median"]) <= estimate["median"] * 0.02
    assert all(layer["cycles"] > units[layer["index"]] for layer in estimate["layers"])   # CPI > 1 each
    waits = estimate["memory_wait_cycles"]
    assert waits["fetch"] > 0 and waits["data"] > 0 and zero_wait["memory_wait_cycles"] == {"fetch": 0, "data": 0}
    assert all(sum(layer["memory_wait_cycles"].values()) < layer["cycles"] for layer in estimate["layers"])
    assert all(layer["memory_wait_cycles"] == {"fetch": 0, "data": 0} for layer in zero_wait["layers"])
    assert main(["run", str(DIGITS), "--board", "nucleo_u575zi_q", "--emulate", "-n", "1"]) == 0
    assert "estimate for nucleo_u575zi_q, emulated on mps2/an505 (cortex-m33 table)" in capsys.readouterr().out
    assert main(["validate", str(DIGITS), "--board", "nucleo_u575zi_q", "--emulate", "--json"]) == 0
    validated = json.loads(capsys.readouterr().out)
    # both time inferences after their samples' own (validate's three, run's one): the caches hold what the last
    # of those left, a few cycles apart
    assert validated["bit_exact"] and abs(validated["estimated_cycles"]["median"] - estimate["median"]) <= \
        estimate["median"] * 0.001


@pytest.mark.qemu
def test_a_hardware_map_lab_emulated_estimates_each_kind_of_board_once(tmp_path, capsys):
    from mtk.cli import main
    lab = tmp_path / "map.yaml"
    lab.write_text("".join(f"- {{connected: true, id: '{k}', platform: {board}, product: STM32 STLink, runner: openocd, "
                           f"serial: /dev/ttyACM{k}}}\n" for k, board in enumerate(["nucleo_l4r5zi", "nucleo_f746zg",
                                                                                     "nucleo_l4r5zi"])))
    assert main(["bench", str(DIGITS), "--lab", str(lab), "--emulate", "-n", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["board"], r["estimated_cycles"]["board"], r["estimated_cycles"]["emulated_on"]) for r in rows] == [
        ("mps2/an386", "nucleo_l4r5zi", "mps2/an386"), ("mps2/an500", "nucleo_f746zg", "mps2/an500")]


@pytest.mark.qemu
def test_a_paced_dut_stamps_estimated_time(tmp_path):
    import serial
    from checkout import FAKE
    from mtk.compiled import CompiledModel
    from mtk.platforms import ProjectOptions, get_platform
    from mtk.runners.qemu_pty import PacedQemu
    board, shift = get_board("mps2/an386"), 5
    from test_qemu import build
    _, _, [inference, *_], _ = _firmware_run(build("mps2/an386", tmp_path / "unpaced", profile=True),
                                             CycleModel.for_board(board, get_board("nucleo_l4r5zi")))
    platform = get_platform("baremetal")
    elf = platform.build(platform.render(CompiledModel.load(FAKE), board, tmp_path / "paced",
                                         ProjectOptions(icount_shift=shift, profile=True)))
    with PacedQemu(board, elf, shift, CycleModel.for_board(board, get_board("nucleo_l4r5zi"))) as qemu, \
            serial.Serial(qemu.port, 115200, timeout=0.2) as port:
        port.write(b"infer 20 0%")
        reply = b""
        while b"m-ready" not in reply.split(b"m-infer-done")[-1] or b"m-infer-done" not in reply:
            chunk = port.read(256)
            assert chunk or len(reply) < 4096, reply
            reply += chunk
    *_, start, end = [int(v) for v in re.findall(rb"m-lap-us-(\d+)\r\n", reply)]
    assert 0 <= (end - start) * 120 - 20 * inference.cycles < 20 * 200   # + the loop, its clock
    assert b"m-warmup-start-0\r\nm-warmup-done\r\nm-infer-start-20\r\n" in reply and b"m-results-[" in reply


V6M_WIDE = {"bl", "msr", "mrs", "dmb", "dsb", "isb"}   # ARMv6-M's only 32-bit instructions
V7M_NARROW = re.compile(r"^(cbn?z|it[te]*)$")           # 16-bit encodings ARMv6-M lacks


@pytest.mark.qemu
def test_a_model_larger_than_the_microbit_is_estimated_on_a_cortex_m0plus_board(tmp_path, capsys):
    import subprocess
    from checkout import SHARED_MODELS
    from mtk.cli import main
    model = SHARED_MODELS / "ad_fc_int8.tflite"   # 276 KB of flash: more than the micro:bit's 256 KB
    assert main(["validate", str(model), "--board", "nucleo_g0b1re", "--emulate", "--json",
                 "--build-dir", str(tmp_path / "build")]) == 0
    validated = json.loads(capsys.readouterr().out)
    estimate = validated["estimated_cycles"]
    assert validated["bit_exact"]
    assert (estimate["board"], estimate["emulated_on"], estimate["core"], estimate["clock_hz"]) == \
        ("nucleo_g0b1re", "mps2/an385", "cortex-m0plus", 64_000_000)
    assert estimate["median"] > estimate["instructions_of_run"]["value"]
    elf = tmp_path / "build" / "project" / "build" / "firmware.elf"   # the firmware stays ARMv6-M on the M3 machine
    assert "Tag_CPU_arch: v6S-M" in subprocess.run(["arm-none-eabi-readelf", "-A", str(elf)], capture_output=True,
                                                   text=True, check=True).stdout
    disassembly = subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True, text=True,
                                 check=True).stdout
    instructions = re.findall(r"^\s+[0-9a-f]+:\t([0-9a-f]{4}(?: [0-9a-f]{4})?)\s*\t(\S+)", disassembly, re.M)
    wide = {mnemonic for code, mnemonic in instructions if " " in code}
    narrow = {mnemonic for code, mnemonic in instructions if " " not in code}
    assert len(instructions) > 1000 and wide <= V6M_WIDE and not any(V7M_NARROW.match(m) for m in narrow)


@pytest.mark.qemu
def test_the_models_code_run_from_the_boards_code_ram_fetches_without_wait_states():
    """The L4R5 emulated with its code RAM (SRAM2 on the code bus) and without: the model's code copied there at
    startup, counted in the firmware's RAM, fetched without the flash's wait states; the same outputs."""
    from dataclasses import replace

    from mtk.commands.run import format_result
    from mtk.cycles.emulate import emulated_runner
    from mtk.pipeline import run_model
    from mtk.runoptions import RunOptions

    def run(board):
        qemu, runner_options = emulated_runner(board)
        return run_model(DIGITS, RunOptions(board=qemu, runs=1, emulate=board, runner_options=runner_options))

    l4r5 = get_board("nucleo_l4r5zi")
    in_code_ram, in_flash = run(l4r5), run(replace(l4r5, code_ram=None))
    assert 0 < in_code_ram.sizes.code_ram_bytes <= in_code_ram.sizes.text_bytes and in_flash.sizes.code_ram_bytes == 0
    assert in_code_ram.sizes.ram_bytes == in_code_ram.sizes.data_bytes + in_code_ram.sizes.bss_bytes + \
        in_code_ram.sizes.code_ram_bytes
    assert in_code_ram.to_json()["code_ram_bytes"] == in_code_ram.sizes.code_ram_bytes
    assert f"; {in_code_ram.sizes.code_ram_bytes:,} B of code run from the code RAM (in both figures)" in \
        format_result(in_code_ram) and "code RAM" not in format_result(in_flash)
    assert in_code_ram.estimate.per_inference.median < in_flash.estimate.per_inference.median
    assert all((a[0] == b[0]).all() for a, b in zip(in_code_ram.outputs, in_flash.outputs))
