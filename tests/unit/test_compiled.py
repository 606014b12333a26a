"""The typed compiled model: metadata.json round trip, the firmware's I/O layout, the one fit check."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from mtk.boards import get_board
from mtk.budget import check_fits, check_runs_on
from mtk.compiled import CompiledModel, CompiledTarget
from mtk.errors import ModelError

from checkout import FAKE, FIXTURES


@pytest.mark.parametrize("folder", ["fake_compiled", "hostrun_sample", "hostrun_workspace_sample"])
def test_metadata_reads_back_to_the_same_json(folder):
    model = CompiledModel.load(FIXTURES / folder)
    assert model.to_json() == json.loads((FIXTURES / folder / "metadata.json").read_text())
    assert CompiledModel.from_json(model.to_json(), model.path) == model


def test_io_tensors_sit_at_aligned_offsets_of_the_firmware_buffers():
    model = CompiledModel.load(FIXTURES / "hostrun_sample")
    assert [t.offset for t in model.inputs] == [0, 16] and model.input_bytes == 22
    assert [t.offset for t in model.outputs] == [0, 16] and model.output_bytes == 17
    packed = model.pack_inputs([b"\x01" * 6, b"\x02" * 6])
    assert packed[:6] == b"\x01" * 6 and packed[16:] == b"\x02" * 6


def test_a_folder_without_valid_metadata_is_named(tmp_path):
    with pytest.raises(ModelError, match="not a compiled model folder"):
        CompiledModel.load(tmp_path)
    shutil.copytree(FAKE, tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "metadata.json").read_text())
    del meta["memory"]
    (tmp_path / "m" / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="metadata.json is not the metadata of a compiled model.*memory"):
        CompiledModel.load(tmp_path / "m")


def test_the_fit_check_counts_code_with_constants_and_stack_with_arena():
    model = CompiledModel.load(FAKE)
    board = get_board("qemu_cortex_m3")
    check_fits(model, board)
    coded = replace(model, memory=replace(model.memory, constant_bytes=board.flash_bytes - 100, code_bytes=101))
    with pytest.raises(ModelError, match=r"constants \+ 101 B of code = 262,145 B of flash"):
        check_fits(coded, board)
    with pytest.raises(ModelError, match=r"65,792 B of RAM \(arena 256, stack 65,536; RAM 65,536 B\)"):
        check_fits(model, board, stack_bytes=65536)


def test_a_model_compiled_for_other_kernels_is_refused():
    model = CompiledModel.load(FAKE)
    check_runs_on(model, get_board("mps2/an385"))   # plain C: any CPU
    m4 = replace(model, target=CompiledTarget("cortex-m4", True, False, "fpv4-sp-d16"))
    check_runs_on(m4, get_board("mps2/an500"))
    with pytest.raises(ModelError, match="compiled for cortex-m4; mps2/an385 has a cortex-m3"):
        check_runs_on(m4, get_board("mps2/an385"))
