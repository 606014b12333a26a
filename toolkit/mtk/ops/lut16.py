"""int16 LOGISTIC and TANH as TFLite's reference kernels compute them, as TIR expressions.

Reference (tensorflow/tflite-micro): kernels/internal/reference/integer_ops/logistic.h and tanh.h,
the int16_t overloads: the input scaled by `input_multiplier` (3 << left_shift when it is 0, the
power-of-two case) with rounding, then a linear interpolation in sigmoid_table_uint16
(kernels/internal/common.h: sigmoid(i/24) in 0.16 format, 256 entries) over |x|, mirrored for
x < 0 (tanh(x) = 2·sigmoid(2x) − 1 reads the same table at twice the step). The LSTM's gates call
them with fixed parameters (micro/kernels/lstm_eval.cc: Sigmoid, Tanh). All intermediate values
stay below 2^31, so int32 arithmetic gives the reference's uint32 results.
"""

from __future__ import annotations

import numpy as np
from tvm import tirx

from .common import i32, let

SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498,
    40149, 40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255,
    46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865,
    52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174,
    56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544, 58800, 59048, 59288,
    59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279, 61441,
    61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886,
    62990, 63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835,
    63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450,
    64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845,
    64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097,
    65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425,
    65429, 65433, 65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465,
    65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508,
    65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516, 65517, 65517, 65518,
    65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525,
    65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529,
    65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531,
    65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533,
    65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65535], dtype=np.uint16)


def input_scaling(input_multiplier: int, input_left_shift: int) -> tuple[int, int]:
    """(multiplier, right shift) the reference applies: `input_multiplier` 0 means 3 << left_shift, no shift."""
    if input_multiplier == 0:
        return 3 << input_left_shift, 0
    return input_multiplier, input_left_shift


def _scaled_input(x, multiplier: int, shift: int):
    rounding = (1 << (shift - 1)) if shift > 0 else 0
    return (x * i32(multiplier) + i32(rounding)) >> i32(shift)


def _interpolated(table, v, step_bits: int, saturated: int):
    """The table interpolated at |v| in steps of 2^step_bits, or `saturated` past its end."""
    def body(a):
        uh = a >> i32(step_bits)
        index = tirx.Min(uh, i32(254))   # in bounds on both branches: Select evaluates both
        ua = table[index].astype("int32")
        ub = table[index + 1].astype("int32")
        interp = (ua << i32(step_bits)) + (a & i32((1 << step_bits) - 1)) * (ub - ua)
        return tirx.Select(uh >= i32(255), i32(saturated), interp)
    return let(tirx.Select(v < i32(0), i32(0) - v, v), body, "abs_x")


def logistic_s16(x, table, multiplier: int, shift: int):
    """reference_integer_ops::Logistic(int16) of the int32 expression `x` (an int16 value), as int16."""
    def body(v):
        result = _interpolated(table, v, 9, 0x7FFF << 10)
        return let(result, lambda r: tirx.Select(v >= i32(0), r + i32(1 << 9),
                                                  i32((1 << 25) + (1 << 9) - 1) - r) >> i32(10), "sig_out")
    return let(_scaled_input(x, multiplier, shift), body, "sig_in").astype("int16")


def tanh_s16(x, table, multiplier: int, shift: int):
    """reference_integer_ops::Tanh(int16) of the int32 expression `x` (an int16 value), as int16."""
    def body(v):
        result = _interpolated(table, v, 8, 0xFFFF << 8)
        return let(result, lambda r: tirx.Select(v >= i32(0), r - i32((1 << 23) - (1 << 7)),
                                                  i32((1 << 23) + (1 << 7) - 1) - r) >> i32(8), "tanh_out")
    return let(_scaled_input(x, multiplier, shift), body, "tanh_in").astype("int16")
