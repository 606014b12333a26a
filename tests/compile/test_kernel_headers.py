"""The hand-written C kernels the generated code includes (toolkit/mtk/kernels/c/), each instruction set's files
(kernels/files.py) built with the host gcc (the Cortex-M3's plain C; the DSP cores', their intrinsics in portable C;
the Cortex-M0+'s, the 64-bit product from 16-bit halves) against Python's exact integers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mtk.kernels.files import C_DIR, FAMILIES, c_files, project_name

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
EDGES = [INT32_MIN, INT32_MIN + 1, -2**30, -65536, -65535, -32768, -1, 0, 1, 32767, 65535, 65536, 2**30, INT32_MAX]

PATHS = {"plain": ("m3", []), "dsp-emulated": ("dsp", []),   # (instruction set, gcc flags)
         "long-multiply-by-halves": ("scalar", ["-DMTK_MUL64_BY_HALVES"])}
FAMILIES_TESTED = ("fixedpoint", "dot_s8", "dot_biased_s8", "pool", "depthwise_s8", "depthwise_s16")


def srdhm(a: int, b: int) -> int:
    """gemmlowp's SaturatingRoundingDoublingHighMul."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    q = abs(ab + nudge) // (1 << 31)
    return q if ab + nudge >= 0 else -q


def c_array(name: str, ctype: str, values) -> str:
    return f"static const {ctype} {name}[{len(values)}] = {{{', '.join(str(int(v)) for v in values)}}};"


def run_c(body: str, path: tuple[str, list[str]], tmp_path: Path) -> list[int]:
    """`body` after the files of the tested families that instruction set `path[0]` has, built with flags `path[1]`."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no host gcc")
    isa, flags = path
    files = c_files(isa, [family for family in FAMILIES_TESTED if isa in FAMILIES[family]])
    src = tmp_path / "t.c"
    src.write_text("#include <stdio.h>\n" + "".join(f'#include "{project_name(f)}"\n' for f in files) + body)
    exe = tmp_path / "t"
    folders = [arg for folder in sorted(C_DIR.iterdir()) for arg in ("-I", str(folder))]
    subprocess.run([gcc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *flags, *folders, str(src), "-o", str(exe)],
                   check=True)
    return [int(v) for v in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
def test_srdhm_matches_gemmlowp(path, tmp_path):
    rng = np.random.default_rng(0)
    pairs = [(a, b) for a in EDGES for b in EDGES]
    pairs += [(int(a), int(b)) for a, b in rng.integers(INT32_MIN, INT32_MAX, (2000, 2), endpoint=True)]
    body = (c_array("A", "int32_t", [a for a, _ in pairs]) + c_array("B", "int32_t", [b for _, b in pairs]) +
            f"\nint main(void) {{ for (int i = 0; i < {len(pairs)}; ++i) printf(\"%ld\\n\", (long)mtk_srdhm(A[i], B[i]));"
            " return 0; }\n")
    assert run_c(body, path, tmp_path) == [srdhm(a, b) for a, b in pairs]


def requant_reference(acc: int, mult: int, shift: int) -> int:
    """TFLite's MultiplyByQuantizedMultiplier (double rounding)."""
    left, right = max(shift, 0), max(-shift, 0)
    x = srdhm(((acc << left) + 2**31) % 2**32 - 2**31, mult)
    mask = (1 << right) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> right) + (1 if (x & mask) > threshold else 0)


def test_negative_rounding_is_left_out_only_where_it_cannot_change_an_output():
    """The fused kernels' requantization (SMMLAR of the doubled sum with the rounding term, "- 1 when negative", a
    shift by e, SSAT, the clamp) without its "- 1" gives TFLite's outputs wherever requant.negative_rounding_matters
    says it does not (act_min >= out_zp), and not everywhere else."""
    from mtk.ops.requant import negative_rounding_matters
    rng = np.random.default_rng(11)

    def fused(acc: int, mult: int, e: int, out_zp: int, lo: int, sign: bool) -> int:
        x2 = 2 * acc
        v = ((x2 * mult + 2**31) >> 32) + 2**(e - 1) + out_zp * 2**e - (sign and x2 < 0)
        return max(min(max(v >> e, -128), 127), lo)

    changed = 0
    for _ in range(20000):
        acc, mult = int(rng.integers(-2**16, 2**16)), int(rng.integers(2**30, 2**31))
        e, out_zp, lo = int(rng.integers(1, 8)), int(rng.integers(-128, 128)), int(rng.integers(-128, 128))
        expected = max(min(requant_reference(acc, mult, -e) + out_zp, 127), lo)
        assert fused(acc, mult, e, out_zp, lo, True) == expected
        if negative_rounding_matters(out_zp, lo):
            changed += fused(acc, mult, e, out_zp, lo, False) != expected
        else:
            assert fused(acc, mult, e, out_zp, lo, False) == expected
    assert changed > 0


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
def test_requant_rshift_matches_tflite(path, tmp_path):
    from mtk.ops.requant import Requant
    rng = np.random.default_rng(2)
    accs = EDGES + [int(v) for v in rng.integers(INT32_MIN, INT32_MAX, 1500, endpoint=True)]
    accs += [int(v) for v in rng.integers(-70000, 70000, 1500)]
    mults = [0, 1, 2**30, 2**31 - 1] + [int(v) for v in rng.integers(2**30, 2**31, len(accs) - 4)]
    shifts = [-int(v) for v in rng.integers(1, 32, len(accs))]
    table = Requant(np.array(mults, np.int32), np.array(shifts, np.int32), 0, -128, 127).rshift_table
    body = (c_array("ACC", "int32_t", accs) + c_array("Q", "int32_t", table.reshape(-1)) +
            f"\nint main(void) {{ for (int i = 0; i < {len(accs)}; ++i) printf(\"%ld\\n\", (long)mtk_requant_rshift("
            "ACC[i], Q[4 * i], Q[4 * i + 1], Q[4 * i + 2], Q[4 * i + 3])); return 0; }\n")
    assert run_c(body, path, tmp_path) == [requant_reference(a, m, s) for a, m, s in zip(accs, mults, shifts)]


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
def test_clamp_s8(path, tmp_path):
    cases = [(x, lo, hi) for x in (-1000, -129, -128, -5, 0, 5, 127, 128, 1000) for lo, hi in ((-128, 127), (-3, 127),
                                                                                             (-128, 6), (-3, 6))]
    body = "".join(c_array(n, "int32_t", [c[i] for c in cases]) for i, n in enumerate(("X", "LO", "HI")))
    body += (f"\nint main(void) {{ for (int i = 0; i < {len(cases)}; ++i) printf(\"%ld\\n\", "
             "(long)mtk_clamp_s8(X[i], LO[i], HI[i])); return 0; }\n")
    assert run_c(body, path, tmp_path) == [min(max(x, lo), hi) for x, lo, hi in cases]


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
def test_gemm_kernels_match_numpy(path, tmp_path):
    """Rows packed by mtk_pack_pair_s16 / mtk_pack_row_s16 against weights packed by microkernels.pack_weights,
    int8, int16-expanded (pack_weights_int16, the mtk_dot_*_w16_s8 kernels) and on DSP cores biased
    (pack_weights_biased, mtk_dot_*_biased_s8 with the rows' sums from mtk_pack_sums_s16)."""
    from mtk.ops.microkernels import pack_weights, pack_weights_biased, pack_weights_int16
    rng = np.random.default_rng(1)
    lines, expected = [], []
    sizes = [1, 3, 4, 7, 16, 33, 600, 1021]
    for case, k in enumerate(sizes):
        a = rng.integers(-128, 128, (2, k))
        b = rng.integers(-128, 128, (4, k))
        a[0, 0], b[0, 0] = -128, -128   # the extreme product
        if k > 512:   # the largest sums: every product -128 * -128 (the M3 path splits them into chunks)
            a[:, :], b[:2, :] = -128, -128
        groups = -(-k // 4)
        lines += [c_array(f"a{case}_{r}", "int8_t", a[r]) for r in range(2)]
        lines.append(c_array(f"w2_{case}", "int8_t", pack_weights(b[:2].astype(np.int8), 2)))
        lines.append(c_array(f"w4_{case}", "int8_t", pack_weights(b.astype(np.int8), 4)))
        lines.append(c_array(f"v2_{case}", "int16_t", pack_weights_int16(b[:2].astype(np.int8), 2)))
        lines.append(c_array(f"v4_{case}", "int16_t", pack_weights_int16(b.astype(np.int8), 4)))
        calls = [("pair", "2x2", "w2"), ("row", "1x4", "w4"), ("pair", "2x2_w16", "v2"), ("row", "1x4_w16", "v4")]
        if path[0] == "dsp":
            lines.append(c_array(f"u2_{case}", "int8_t", pack_weights_biased(b[:2].astype(np.int8), 2)))
            lines.append(c_array(f"u4_{case}", "int8_t", pack_weights_biased(b.astype(np.int8), 4)))
            calls += [("pair", "2x2_biased", "u2"), ("row", "1x4_biased", "u4")]
        lines.append(f"static void case{case}(void) {{ int32_t acc[6]; int32_t col[{4 * groups}];" + "".join(
            f" mtk_pack_{rows}_s16(a{case}_0, {f'a{case}_1, ' if rows == 'pair' else ''}{k}, col);"
            + (f" mtk_pack_sums_s16(col, {groups}, {2 if rows == 'pair' else 1}, acc + 4);" if 'biased' in kernel else "")
            + f" mtk_dot_{kernel}_s8(col, {w}_{case}, {groups}, acc);"
            " for (int i = 0; i < 4; ++i) printf(\"%ld\\n\", (long)acc[i]);" for rows, kernel, w in calls) + " }")
        expected += len(calls) // 2 * ([int(a[i] @ b[j]) for i in range(2) for j in range(2)] +
                                       [int(a[0] @ b[j]) for j in range(4)])
    body = "\n".join(lines) + "\nint main(void) {" + "".join(f" case{c}();" for c in range(len(sizes)))
    assert run_c(body + " return 0; }\n", path, tmp_path) == expected


@pytest.mark.parametrize("tile, chunk, shared", [(2, None, False), (4, None, True), (4, 3, True), (4, None, False),
                                                 (4, 3, False)],
                         ids=["2x2", "1x4", "1x4-chunks-of-3", "1x4-per-channel", "1x4-per-channel-chunks-of-3"])
def test_fused_gemm_matches_tflite_requantization(tile, chunk, shared, tmp_path):
    """mtk_gemm_2x2_fused_s8 (two rows, an odd last row: stride 0, odd channel counts), mtk_gemm_1x4_fused_s8 (one
    row, a partial last quad; packing the row itself) and mtk_gemm_1x4_fused_chunk_s8 (the row packed 3 groups at a
    time, the last chunk partial), their channels sharing one multiplier and shift or not (the _pc kernels), over a
    stream of pack_fused_stream, against TFLite's MultiplyByQuantizedMultiplier, + out_zp, clamped; biases and shifts
    at the bounds microkernels.fused_stream_exact allows."""
    from mtk.ops.microkernels import fused_stream_exact, pack_fused_stream, shares_requantization
    from mtk.ops.requant import negative_rounding_matters
    rng = np.random.default_rng(5)
    lines, expected = [], []
    cases = [(1, 1, 0, -128, 127), (13, 7, 7, -128, 127), (36, 6, 6, 5, 127), (64, 5, 0, -128, 0), (130, 3, 3, -20, 6)]
    for case, (k, channels, stride, lo, hi) in enumerate(cases):
        a = rng.integers(-128, 128, (2, k))
        w = rng.integers(-128, 128, (channels, k))
        a[0], w[0] = -128, -128   # the largest sum
        mult = rng.integers(2**30, 2**31, channels)
        mult[-1] = 0
        shift = -rng.integers(1, 31, channels)
        if shared:   # one multiplier and shift for every channel
            mult[:], shift[:] = mult[case % 2 - 1], shift[0]
        out_zp = int(rng.integers(-128, 128))
        bound = 2**30 - 1 - 128 * np.abs(w).sum(axis=1)
        bias = np.where(rng.integers(0, 2, channels) == 1, bound, -bound) // rng.integers(1, 3, channels)
        for c in range(channels):   # the largest rounding term fused_stream_exact allows
            while not fused_stream_exact(w[c:c + 1], bias[c:c + 1], mult[c:c + 1], shift[c:c + 1], out_zp):
                shift[c] += 1
        if shared:
            shift[:] = shift.max()
        assert fused_stream_exact(w, bias, mult, shift, out_zp)
        stream = pack_fused_stream(w.astype(np.int8), bias, mult, shift, out_zp, tile, chunk)
        stride = stride if tile == 2 else 0
        pc = "" if tile == 2 or shares_requantization(mult, shift) else "_pc"   # (as gemm.py picks it)
        groups = -(-k // 4)
        sign = int(negative_rounding_matters(out_zp, lo))
        lines += [c_array(f"a{case}_{r}", "int8_t", a[r]) for r in range(2 if stride else 1)]
        lines.append(f"static const int32_t s{case}[{stream.size // 4}] = {{"
                     + ", ".join(str(v) for v in stream.view(np.int32)) + "};")
        if chunk:
            call = (f" int32_t sums[{4 * -(-channels // 4)}]; for (int g0 = 0; g0 < {groups}; g0 += {chunk}) {{"
                    f" int gc = {groups} - g0 < {chunk} ? {groups} - g0 : {chunk};"
                    f" mtk_pack_row_s16(a{case}_0 + 4 * g0, {k} - 4 * g0 < 4 * gc ? {k} - 4 * g0 : 4 * gc, col);"
                    f" mtk_gemm_1x4_fused{pc}_chunk_s8(col, s{case}, gc, {channels}, out, sums, g0, {groups}, 0, 0, {lo}, {hi}); }}")
        elif tile == 2:
            call = (f" mtk_pack_pair_s16(a{case}_0, a{case}_{1 if stride else 0}, {k}, col);"
                    f" mtk_gemm_2x2_fused_s8(col, s{case}, {groups}, {channels}, out, {stride}, {lo}, {hi}, {sign}, 0);")
        else:
            call = (f" mtk_gemm_1x4_fused{pc}_s8(col, s{case}, {groups}, {channels}, out, a{case}_0, {k}, {lo}, {hi},"
                    f" {sign});")
        lines.append(f"static void case{case}(void) {{ int32_t col[{4 * groups}]; int8_t out[{channels + stride}];"
                     + call + f" for (int i = 0; i < {channels + stride}; ++i) printf(\"%d\\n\", out[i]); }}")
        for r in (0, 1) if stride else (0,):
            for c in range(channels):
                v = requant_reference(int(a[r] @ w[c]) + int(bias[c]), int(mult[c]), int(shift[c])) + out_zp
                expected.append(min(max(v, lo), hi))
    body = "\n".join(lines) + "\nint main(void) {" + "".join(f" case{c}();" for c in range(len(cases)))
    assert run_c(body + " return 0; }\n", PATHS["dsp-emulated"], tmp_path) == expected


def test_fused_stream_folds_constant_channels(tmp_path):
    """A layer whose dead channels (zero weights, biases near ±2^30, shifts down to −31: beyond
    fused_stream_exact's bounds) output a constant: fused_stream_params folds them, and mtk_gemm_2x2_fused_s8 over
    the folded stream matches TFLite's requantization of the layer as it is, for random and extreme rows, and so
    does mtk_gemm_2x2_fused_live_s8 over the live channels' stream and live_channel_tables (two rows, and one: stride
    0); a channel the input moves past the bounds leaves the layer unfused."""
    from mtk.ops.microkernels import (constant_channels, fused_stream_exact, fused_stream_params, live_channel_tables,
                                      pack_fused_stream)
    rng = np.random.default_rng(8)
    k, channels, out_zp, lo, hi = 21, 7, -128, -128, 127
    w = rng.integers(-128, 128, (channels, k))
    mult = rng.integers(2**30, 2**31, channels)
    shift = -rng.integers(5, 12, channels)
    bias = rng.integers(-2**12, 2**12, channels)
    dead = {1: (-2**30, -27), 3: (2**30, -31), 4: (-2**30 - 128, 0)}   # channel: its bias and shift
    for c, (b, e) in dead.items():
        w[c], bias[c], shift[c] = 0, b, e
    mult[3], mult[4] = 2**31 - 1, 0
    w[5], bias[5], shift[5] = 0, 2**30 - 64, -31
    w[5, 3] = 1                                                        # the input moves it by ±128 at most
    assert not fused_stream_exact(w, bias, mult, shift, out_zp)
    folded = fused_stream_params(w, bias, mult, shift, out_zp, lo, hi)
    assert folded is not None and not np.any(folded[0][[1, 3, 4, 5]])
    moved = w.copy()
    moved[3, 0] = 100   # channel 3's outputs −128 and −127 on either side of 2^30
    assert fused_stream_params(moved, bias, mult, shift, out_zp, lo, hi) is None
    stream = pack_fused_stream(folded[0].astype(np.int8), *folded[1:], out_zp, 2)
    a = rng.integers(-128, 128, (4, k))
    a[2], a[3] = -128, 127
    groups = -(-k // 4)
    lines = [c_array(f"a{r}", "int8_t", a[r]) for r in range(4)]
    lines.append(c_array("s", "int32_t", stream.view(np.int32)))
    constant = constant_channels(*folded, out_zp, lo, hi)
    live = constant < lo
    live_stream = pack_fused_stream(folded[0][live].astype(np.int8), *(v[live] for v in folded[1:]), out_zp, 2)
    lines.append(c_array("t", "int8_t", np.concatenate([live_stream, live_channel_tables(constant, constant < lo)])))
    show = f" for (int i = 0; i < {2 * channels}; ++i) printf(\"%d\\n\", out[i]);"
    calls = "".join(f" mtk_pack_pair_s16(a{r}, a{r + 1}, {k}, col);"
                    f" mtk_gemm_2x2_fused_s8(col, s, {groups}, {channels}, out, {channels}, {lo}, {hi}, 0, 0);" + show
                    + f" mtk_gemm_2x2_fused_live_s8(col, t, {groups}, {int(live.sum())}, out, {channels}, {lo}, {hi}, 0, 0,"
                    f" {channels}, {live_stream.size});" + show for r in (0, 2))
    calls += (f" mtk_pack_pair_s16(a3, a3, {k}, col); for (int i = 0; i < {2 * channels}; ++i) out[i] = 0;"
              f" mtk_gemm_2x2_fused_live_s8(col, t, {groups}, {int(live.sum())}, out, 0, {lo}, {hi}, 0, 0, {channels},"
              f" {live_stream.size});" + show)
    body = "\n".join(lines) + f"\nint main(void) {{ int32_t col[{4 * groups}]; int8_t out[{2 * channels}];{calls}"
    outputs = [[min(max(requant_reference(int(a[r] @ w[c]) + int(bias[c]), int(mult[c]), int(shift[c])) + out_zp,
                        lo), hi) for c in range(channels)] for r in range(4)]
    expected = 2 * (outputs[0] + outputs[1]) + 2 * (outputs[2] + outputs[3]) + outputs[3] + [0] * channels
    assert run_c(body + " return 0; }\n", PATHS["dsp-emulated"], tmp_path) == expected


def packings_without_dsp() -> dict[str, tuple]:
    """The micro-kernels only cores without DSP have: their weight packing, its C type, rows, channels."""
    from mtk.ops.microkernels import pack_weight_pairs, pack_weights
    return {"1x4_paired": (pack_weight_pairs, "int32_t", 1, 4), "1x8": (lambda w: pack_weights(w, 8), "int8_t", 1, 8),
            "2x4": (lambda w: pack_weights(w, 4), "int8_t", 2, 4)}


@pytest.mark.parametrize("kernel, path", [("1x4_paired", PATHS["plain"]),   # these two need a long multiply
                                           ("2x4", PATHS["plain"]),
                                           ("1x8", PATHS["plain"]), ("1x8", PATHS["long-multiply-by-halves"])],
                         ids=["1x4_paired-plain", "2x4-plain", "1x8-plain", "1x8-long-multiply-by-halves"])
def test_kernels_without_dsp_match_numpy(kernel, path, tmp_path):
    pack, ctype, rows, channels = packings_without_dsp()[kernel]
    rng = np.random.default_rng(4)
    lines, expected, sizes = [], [], [1, 5, 64, 640, 1021]
    for case, k in enumerate(sizes):
        a = rng.integers(-128, 128, (rows, k))
        b = rng.integers(-128, 128, (channels, k))
        if k > 512:   # the largest sums: the M3's pair kernels split them into chunks
            a[:], b[:] = -128, -128
        groups = -(-k // 4)
        pack_rows = f"mtk_pack_pair_s16(a{case}[0], a{case}[1], " if rows == 2 else f"mtk_pack_row_s16(a{case}[0], "
        lines += [f"static const int8_t a{case}[{rows}][{k}] = {{{', '.join('{' + ', '.join(map(str, r)) + '}' for r in a)}}};",
                  c_array(f"w{case}", ctype, pack(b.astype(np.int8)))]
        lines.append(f"static void case{case}(void) {{ int32_t acc[{rows * channels}]; int32_t col[{2 * rows * groups}];"
                     f" {pack_rows}{k}, col); mtk_dot_{kernel}_s8(col, w{case}, {groups}, acc);"
                     f" for (int i = 0; i < {rows * channels}; ++i) printf(\"%ld\\n\", (long)acc[i]); }}")
        expected += [int(a[i] @ b[j]) for i in range(rows) for j in range(channels)]
    body = "\n".join(lines) + "\nint main(void) {" + "".join(f" case{c}();" for c in range(len(sizes)))
    assert run_c(body + " return 0; }\n", path, tmp_path) == expected


@pytest.mark.parametrize("label, path", [("1x8/s8", PATHS["plain"]), ("2x2/s8", PATHS["plain"]),
                                          ("1x4/s16", PATHS["dsp-emulated"]), ("1x4/s16", PATHS["plain"]),
                                          ("2x2/s16", PATHS["dsp-emulated"])],
                         ids=["1x8-s8", "2x2-s8", "1x4-s16-dsp-emulated", "1x4-s16-plain", "2x2-s16-dsp-emulated"])
def test_direct_kernels_match_numpy(label, path, tmp_path):
    """The direct kernels (their assembly runs in QEMU, test_kernels_qemu.py): the Cortex-M3's 1x8/s8 and 2x2/s8 (the
    plain path), the DSP cores' 1x4/s16 (emulated, and its plain C for host builds) and 2x2/s16 (emulated), in tiles
    of n = 1 .. their
    block's channels, over int8 rows of k values as they are, whole groups (in pairs and an odd one) and a partial
    last one; the weights of a whole tile and n channels packed as the micro-kernel packs them (a tile and a narrow
    last one); the extremes at -128."""
    from mtk.kernels.table import GEMM_BY_ID
    mk = GEMM_BY_ID[label]
    rows, cols = mk.rows, mk.cols
    rng = np.random.default_rng(6)
    lines, expected, calls = [], [], []
    shapes = [(n, k) for n in range(1, cols + 1) for k in (1, 3, 4, 5, 12, 64, 1021)]
    for case, (n, k) in enumerate(shapes):
        a = rng.integers(-128, 128, (rows, k))
        b = rng.integers(-128, 128, (cols + n, k))
        if k == 1021:
            a[:], b[:] = -128, -128
        packed = mk.pack(b.astype(np.int8), cols, 4)
        tail = mk.weight_bytes(cols, k, 4) // packed.itemsize   # elements of the first tile
        lines += [f"static const int8_t a{case}[{rows}][{k}] = "
                  f"{{{', '.join('{' + ', '.join(map(str, r)) + '}' for r in a)}}};",
                  c_array(f"w{case}", f"int{8 * packed.itemsize}_t", packed)]
        x = ", ".join(f"a{case}[{i}]" for i in range(rows))
        tile = [i * cols + j for i in range(rows) for j in range(n)]
        calls.append(f" {{ int32_t acc[{rows * cols}]; {mk.name}({x}, w{case}, {k}, acc);"
                     f" for (int i = 0; i < {rows * cols}; ++i) printf(\"%ld\\n\", (long)acc[i]);"
                     f" {mk.tile_kernel(n).name}({x}, w{case} + {tail}, {k}, acc);"
                     + "".join(f" printf(\"%ld\\n\", (long)acc[{i}]);" for i in tile) + " }")
        expected += [int(a[i] @ b[j]) for i in range(rows) for j in range(cols)]
        expected += [int(a[i] @ b[cols + j]) for i in range(rows) for j in range(n)]
    body = "\n".join(lines) + "\nint main(void) {" + "".join(calls)
    assert run_c(body + " return 0; }\n", path, tmp_path) == expected


@pytest.mark.parametrize("multiplier", [1, 2, 3, 4])
@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
def test_depthwise_kernel_matches_numpy(path, multiplier, tmp_path):
    """mtk_dw_s8 on a 3x3 window (row step 20, column step 8) with every tap range, against numpy: with
    multiplier 1 the 4 consecutive channels' formulation (offsets 1, 2, 3), otherwise the lanes' (output
    channel c reads input channel c / multiplier); with multiplier 1 also mtk_dw2_s8 (the Cortex-M3's two
    pixels, the second a row on), with an even one also mtk_dw_pairs_s8 (the Cortex-M3's pairs of lanes)."""
    from mtk.ops.depthwise import pack_weights
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (4, 20))
    w = rng.integers(-128, 128, (1, 3, 3, 4))
    x[0, 0], w[0, 0, 0, 0] = -128, -128
    pad = -7
    ranges = [(0, 3, 0, 3), (1, 3, 0, 3), (0, 2, 1, 2), (2, 2, 0, 3), (0, 3, 2, 3)]
    source = [j // multiplier for j in range(4)]
    body = c_array("X", "int8_t", x.reshape(-1)) + c_array("W", "int16_t", pack_weights(w.astype(np.int8), multiplier))
    body = body + "\nint main(void) { int32_t acc[4];"
    expected = []
    for ky_lo, ky_hi, kx_lo, kx_hi in ranges:
        body += (f" mtk_dw_s8(X, 20, 8, W, 3, 3, {ky_lo}, {ky_hi}, {kx_lo}, {kx_hi}, {pad}, "
                 f"{source[1]}, {source[2]}, {source[3]}, acc); for (int i = 0; i < 4; ++i) printf(\"%ld\\n\", (long)acc[i]);")
        for j in range(4):
            expected.append(sum(int(w[0, ky, kx, j]) * (int(x[ky, kx * 8 + source[j]]) if ky_lo <= ky < ky_hi and
                                                          kx_lo <= kx < kx_hi else pad)
                                for ky in range(3) for kx in range(3)))
    if multiplier % 2 == 0:
        body = c_array("WP", "int16_t", pack_weights(w.astype(np.int8), multiplier, paired=True)) + "\n" + body
        for ky_lo, ky_hi, kx_lo, kx_hi in ranges:
            body += (f" mtk_dw_pairs_s8(X, 20, 8, WP, 3, 3, {ky_lo}, {ky_hi}, {kx_lo}, {kx_hi}, {pad}, {source[2]},"
                     " acc);"
                     " for (int i = 0; i < 4; ++i) printf(\"%ld\\n\", (long)acc[i]);")
        expected += expected[:]
    if multiplier == 1:
        body += (" { int32_t acc2[8]; mtk_dw2_s8(X, 20, 8, 20, W, 3, 3, acc2);"
                 " for (int i = 0; i < 8; ++i) printf(\"%ld\\n\", (long)acc2[i]); }")
        expected += [sum(int(w[0, ky, kx, j]) * int(x[ky + pixel, kx * 8 + j]) for ky in range(3) for kx in range(3))
                     for pixel in range(2) for j in range(4)]
    body += " return 0; }\n"
    assert run_c(body, path, tmp_path) == expected


@pytest.mark.parametrize("value", [-128, 127])
def test_depthwise_pairs_at_their_tap_bound(value, tmp_path):
    """mtk_dw_pairs_s8 over MTK_DW_PAIR_TAPS (255) taps of inputs at `value` and weights -128 / 127 / -127 (the low
    lane's sum at its most positive or most negative), some taps outside (read as the pad)."""
    from mtk.ops.depthwise import PAIR_TAPS, pack_weights
    kh, kw = 15, 17
    assert kh * kw == PAIR_TAPS
    w = np.empty((1, kh, kw, 4), np.int8)
    w[..., 0], w[..., 1], w[..., 2], w[..., 3] = -128, 127, -127, -128
    body = (c_array("W", "int16_t", pack_weights(w, 2, paired=True)) + f"\nstatic int8_t X[{kh * kw * 4}];\n"
            f"int main(void) {{ int32_t acc[4]; for (int i = 0; i < {kh * kw * 4}; ++i) X[i] = {value};"
            f" mtk_dw_pairs_s8(X, {kw * 4}, 4, W, {kh}, {kw}, 0, {kh}, 1, {kw}, {value}, 1, acc);"
            " for (int i = 0; i < 4; ++i) printf(\"%ld\\n\", (long)acc[i]); return 0; }\n")
    assert run_c(body, PATHS["plain"], tmp_path) == \
        [kh * kw * value * int(w[0, 0, 0, j]) for j in range(4)]


@pytest.mark.parametrize("shifts", [(8, 46), (16, 46), (16, 32)], ids=["high-0", "high-1", "high-2"])
def test_depthwise_s16_requant_matches_tflite(shifts, tmp_path):
    """mtk_requant_table_s16 (mtk_depthwise_s16.h) from int16x8.requant_s64_table, in each of its modes, against
    TFLite's MultiplyByQuantizedMultiplier(int64_t acc + bias): (x·r + 2^(t−1)) >> t truncated to int32, saturated."""
    from mtk.ops.int16x8 import requant_s64_table
    rng = np.random.default_rng(5)
    n = 1500
    accs = [int(v) for v in rng.integers(INT32_MIN, INT32_MAX, n, endpoint=True)]
    accs[:len(EDGES)] = EDGES
    bias = rng.integers(-2**40, 2**40, n)
    bias[::3] = 0
    reduced = rng.integers(0, 0x7FFF, n, endpoint=True)
    total = rng.integers(shifts[0], shifts[1], n, endpoint=True)
    b, r, s, high = requant_s64_table(bias, reduced, total)
    assert high == {(8, 46): 0, (16, 46): 1, (16, 32): 2}[shifts]
    body = (c_array("ACC", "int32_t", accs) + c_array("R", "int32_t", r) +
            c_array("S", "int32_t", s) + f"static const int64_t B[{n}] = {{{', '.join(f'{int(v)}LL' for v in b)}}};" +
            f"\nint main(void) {{ for (int i = 0; i < {n}; ++i) printf(\"%ld\\n\", (long)mtk_requant_table_s16(ACC[i],"
            f" B[i], R[i], S[i], {high}, -32768, 32767)); return 0; }}\n")
    expected = []
    for a, bi, ri, t in zip(accs, bias, reduced, total):
        v = ((a + int(bi)) * int(ri) + (1 << (int(t) - 1))) >> int(t)
        expected.append(min(max((v + 2**31) % 2**32 - 2**31, -32768), 32767))
    assert run_c(body, PATHS["plain"], tmp_path) == expected


@pytest.mark.parametrize("path", [PATHS["plain"], PATHS["dsp-emulated"]], ids=["plain", "dsp-emulated"])
def test_pool_max_min_of_byte_lanes(path, tmp_path):
    """mtk_pool.h's max and min of 4 signed bytes a word (plain: compared within the word, as the M3 runs it): every
    pair of bytes in every lane, the other lanes' bytes varying; prints the lanes that differ from C's own."""
    body = """
int main(void) {
  uint32_t seed = 1, bad = 0;
  for (int a = -128; a < 128; ++a)
    for (int b = -128; b < 128; ++b)
      for (int lane = 0; lane < 4; ++lane) {
        seed = seed * 1664525u + 1013904223u;
        const uint32_t keep = ~(0xffu << 8 * lane), A = (seed & keep) | (uint32_t)(uint8_t)a << 8 * lane;
        const uint32_t B = (~seed * 2654435761u & keep) | (uint32_t)(uint8_t)b << 8 * lane;
        const uint32_t hi = mtk_pool_max_s8x4(A, B), lo = mtk_pool_min_s8x4(A, B);
        for (int l = 0; l < 4; ++l) {
          const int8_t x = (int8_t)(A >> 8 * l), y = (int8_t)(B >> 8 * l);
          bad += (int8_t)(hi >> 8 * l) != (x > y ? x : y) || (int8_t)(lo >> 8 * l) != (x < y ? x : y);
        }
      }
  printf("%lu\\n", (unsigned long)bad);
  return 0;
}
"""
    assert run_c(body, path, tmp_path) == [0]
