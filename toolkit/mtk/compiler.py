"""`mtk compile`: graph -> op kernels (TVM) -> storage plan -> AOT program (C library) -> CompiledModel.

Orchestration only: ops lower themselves (ops/), codegen/storage.py places the tensors,
codegen/aot.py binds the kernels into the run function and emits the C, compiled.py is the result
(metadata.json), budget.py checks it against a board.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from . import ui
from .boards import Board, get_board
from .budget import DEFAULT_MAX_RECOMPUTE, arena_room, check_fits, flash_bytes, stack_reservation, system_reserved
from .buildfiles import folder_layout, fragments
from .codegen import aot
from .codegen.code_size import measure_code
from .codegen.memory_plan import align
from .codegen.regions import Pool, constants_regions, footprint, live_bytes, place_in_regions
from .codegen.schedule import early_last_readers
from .codegen.staging import stage_constants
from .codegen.storage import AliasSets, Step, Storage, join_aliases, ordered_steps, plan_storage
from .codegen.tiling import tile
from .compiled import (CompiledModel, CompiledOp, CompiledTarget, MemoryUse, RamConstants, RegionUse, Tiling, by_region,
                       in_ram_bytes)
from .errors import ModelError
from .fsutil import atomic_output_dir
from .graph import Graph
from .kernels.files import C_DIR, project_name
from .kernels.table import GEMM_BY_ID
from .names import module as module_identifier
from .ops import computes, op_def, prepare_ops
from .ops.base import Lowered, OpData, State
from .ops.common import at_op
from .ops.gemm import COMPACT_KERNEL, leaves_constant_channels_out
from .ops.variants import Variant
from .reader import as_graph
from .target import DEFAULT_CPU, Costs, Cpu, get_cpu
from .tuning import Layer, Tuning, tunable_layers

EDGE_OPS = ("QUANTIZE", "DEQUANTIZE", "CAST")   # conversions between float and integer tensors


def check_supported(graph: Graph, cpu: Cpu | None = None) -> list[OpData]:
    """Whole-model checks first, then every op prepared for `cpu` (default: DEFAULT_CPU); all
    unsupported ops are reported at once. Returns the prepared ops."""
    path = graph.source or graph.name
    compute_inputs = {i for op in graph.ops if op.type not in EDGE_OPS and not _computes_float(op, graph)
                      for i in op.inputs if i is not None}
    float_compute = [graph.tensors[i] for i in compute_inputs
                     if graph.tensors[i].dtype.startswith("float") and not graph.tensors[i].is_constant]
    if float_compute:
        int8_weights = any(t.is_constant and t.dtype == "int8" for t in graph.tensors)
        if int8_weights:
            raise ModelError(f"{path} is a dynamic-range quantized model (float activations, int8 weights); "
                             "mtk needs full-integer int8 models",
                             hint="quantize the float model with `mtk quantize model.tflite --calib data.npy`")
        raise ModelError(f"{path} is a float model (tensor '{float_compute[0].name}' is {float_compute[0].dtype})",
                         hint="quantize it first with `mtk quantize model.tflite --calib data.npy -o model_int8.tflite`")
    return prepare_ops(graph, cpu or get_cpu(DEFAULT_CPU))


def _computes_float(op, graph: Graph) -> bool:
    """An op a family of mtk computes in float (the float32 MUL ending an audio front end)."""
    first = graph.tensor(op.inputs[0]) if op.inputs else None
    return first is not None and first.dtype == "float32" and computes(op.type, "float32")


def lower_ops(prepared: list[OpData], tuning: Tuning) -> tuple[list[Step], dict[int, Layer]]:
    """Every op's kernels, in order (tunable layers in the variant `tuning` holds for them, the others
    and layers it does not hold in their default); the tunable layers by op index."""
    layers = {layer.op.index: layer for layer in tunable_layers(prepared)}
    steps: list[Step] = []
    for data in prepared:
        layer = layers.get(data.op.index)
        steps.append((data.op, lower_op(data, tuning.variant(layer) if layer else None)))
    return steps, layers


def lower_op(data: OpData, variant: Any) -> Lowered:
    """The op's kernels in `variant` (None: its default)."""
    try:
        return op_def(data.op.type).lower(data, variant)
    except ModelError as err:
        raise ModelError(at_op(data.op, err.message), err.hint) from None


CHUNK_MIN_SAVING = 1 / 8   # of the arena: what chunked scratch must save to be worth its instructions


def chunk_scratch(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets,
                  storage: Storage) -> tuple[list[Step], Storage]:
    """No variant raises the peak for free: a GEMM whose whole-row scratch makes its step's live bytes
    exceed the arena the model needs with every such GEMM chunked takes its chunked variant (a scratch
    of a chunk of the row and partial sums: OpDef.chunked); the others keep theirs. RAM is weighed
    against instructions (a chunk's partial sums cost a few % of the layer's): chunking is taken only
    when it saves at least CHUNK_MIN_SAVING of the arena (the 4000 -> 4 FC 94 %, AD 18 %; IC's 3x3
    convolutions would save 0.5 % for +3 % instructions on the M4, +9 % on the M55, and keep their
    whole-window scratch). Returns the steps and their storage."""
    chunkable = {i: op_def(data.op.type).chunked(data, low.variant) for i, (data, (_, low)) in
                 enumerate(zip(prepared, steps))}
    chunkable = {i: variant for i, variant in chunkable.items() if variant is not None}
    if not chunkable:
        return steps, storage
    all_chunked = [(op, lower_op(prepared[i], chunkable[i])) if i in chunkable else (op, low)
                   for i, (op, low) in enumerate(steps)]
    lean = plan_storage(graph, all_chunked, aliases)
    if lean.plan.arena_bytes > storage.plan.arena_bytes * (1 - CHUNK_MIN_SAVING):
        return steps, storage
    live = {i: sum(align(b.nbytes) for b in storage.plan.buffers if b.first_use <= i <= b.last_use) for i in chunkable}
    mixed = [all_chunked[i] if i in chunkable and live[i] > lean.plan.arena_bytes else step
             for i, step in enumerate(steps)]
    mixed_storage = plan_storage(graph, mixed, aliases)
    if mixed_storage.plan.arena_bytes <= lean.plan.arena_bytes:
        return mixed, mixed_storage
    return all_chunked, lean


def tiled_within(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets, storage: Storage,
                 limit: int, max_recompute: float, costs: Costs) -> tuple[list[Step], Storage, Tiling | None]:
    """`steps` tiled for an arena of at most `limit` bytes (codegen/tiling.py), or as they are when they fit."""
    if storage.plan.arena_bytes <= limit:
        return steps, storage, None
    with ui.step(f"tiling: arena {storage.plan.arena_bytes:,} B above {limit:,} B"):
        return tile(graph, prepared, steps, aliases, storage, limit, max_recompute, lower_op,
                    lambda d: op_def(d.op.type).macs(d), costs)


def lean_scratch(graph: Graph, prepared: list[OpData], steps: list[Step], aliases: AliasSets,
                 storage: Storage, limit: int) -> tuple[list[Step], Storage]:
    """For an arena tiling cannot bring under `limit`: the layers at whose step more than `limit` bytes are live
    and that have a variant in less scratch for more cycles (OpDef.leaner: a Winograd F(4x4) conv's F(2x2), an
    F(2x2) one's GEMM, a GEMM in smaller chunks) take it. Returns the steps and their storage (`steps` itself when
    no such layer has one)."""
    live = live_bytes(storage.plan.buffers, len(steps))
    leaner = [op_def(data.op.type).leaner(data, low.variant) if live[i] > limit else None
              for i, (data, (_, low)) in enumerate(zip(prepared, steps))]
    if not any(leaner):
        return steps, storage
    lean = [(op, lower_op(data, variant)) if variant is not None else (op, low)
            for data, (op, low), variant in zip(prepared, steps, leaner)]
    return lean, plan_storage(graph, lean, aliases)


def leanest_tuning(layers: Iterable[Layer], tuning: Tuning, cache_bytes: int | None = None) -> Tuning | None:
    """`tuning` with every layer it leaves to its default pinned to its leanest variant in flash, where the
    default takes more (None: no such layer); with `cache_bytes`, only where the default's constants exceed
    them and the leanest's do not. The variants a tuning file holds stay as they are."""
    def takes_leanest(layer: Layer) -> bool:
        default, lean = (layer.weight_bytes[v.label] for v in (layer.variants[0], layer.leanest()))
        return default > lean and (cache_bytes is None or lean <= cache_bytes < default)
    lean = {layer.key: layer.leanest() for layer in layers if layer.key not in tuning.variants and takes_leanest(layer)}
    return Tuning({**tuning.variants, **lean}, tuning.source) if lean else None


SLOW_FLASH_CYCLES_PER_BYTE = 1.0   # a constant's flash miss costing more per byte than an instruction


def constants_cache_bytes(board: Board) -> int | None:
    """The cache that keeps a layer's constants between its passes over them, on a board whose flash miss
    costs at least SLOW_FLASH_CYCLES_PER_BYTE per byte of its line (memory_timing: a QSPI flash behind an
    XIP cache); None elsewhere. There a layer whose default constants do not fit it (Winograd's transformed
    weights) and whose leanest do re-reads them from flash at each pass: it takes the leanest."""
    flash = board.flash_timing
    cache = flash.load_cache if flash else None
    if cache is None or flash.wait_states / cache.line < SLOW_FLASH_CYCLES_PER_BYTE:
        return None
    return cache.bytes


def cache_fitting_tuning(prepared: list[OpData], tuning: Tuning, board: Board | None, weights_in_ram: bool) -> Tuning:
    """`tuning` with each layer it leaves to its default on its leanest variant where only that one's constants fit
    `board`'s slow flash's cache (constants_cache_bytes); as it is without such a cache or with the constants in
    RAM."""
    cache_bytes = constants_cache_bytes(board) if board is not None and not weights_in_ram else None
    if cache_bytes is None:
        return tuning
    return leanest_tuning(tunable_layers(prepared), tuning, cache_bytes) or tuning


CODE_MISS_CYCLES_PER_BYTE = 0.5   # a fetch miss costing about a cycle or more per Thumb instruction (2-4 bytes)
# Variants whose code run for each row pair fits a 1 KB fetch cache whatever the layer's code around it (2x4/compact's
# loop and outputs, ~700 B; a layer's constant channels' tables add code run once a row: VWW's 128 -> 128 pointwise,
# 1,728 B, 479,334 estimated cycles on the L4R5 against 2x4/fused's 992,586)
HOT_CODE_FITS = frozenset({Variant(COMPACT_KERNEL)})


def code_cache_bytes(board: Board) -> int | None:
    """The cache that keeps a layer's kernel code between its calls, on a board whose flash fetch miss costs at least
    CODE_MISS_CYCLES_PER_BYTE per byte of its line (memory_timing: the STM32L4R5's ART, 5 wait states a 64-bit read;
    an XIP cache in front of a QSPI flash); None elsewhere. There a GEMM kernel larger than it streams from flash
    at every call: code_fitting_tuning. None too on a board with a code RAM, whose firmware runs the model's code
    from there (budget.code_ram_for)."""
    flash = board.flash_timing
    cache = flash.fetch_cache if flash else None
    if cache is None or board.code_ram is not None or flash.wait_states / cache.line < CODE_MISS_CYCLES_PER_BYTE:
        return None
    return cache.bytes


def one_stream_flash(board: Board) -> bool:
    """Whether the board's flash rewards one sequential weight stream: a fill of the line after its last fill waits
    less than another (memory_timing's sequential_wait_states: the RP2350's QMI, 48 cycles against 108)."""
    if (flash := board.flash_timing) is None:
        return False
    first, sequential = flash.fill_waits()
    return sequential < first


def code_fitting_variants(layer: Layer) -> list[Variant]:
    """The variants a layer takes, in order, where its default's code overflows the fetch cache: for a GEMM of
    several rows, whose kernel code runs again for each row pair (or four) and streams from flash when it overflows,
    the variants after its default; only the two-row fused ones where those leave constant channels out (their fewer
    products beat any code); other layers, none: they keep their default."""
    kernel = GEMM_BY_ID.get(layer.variants[0].kernel)
    if kernel is None or kernel.rows < 2:
        return []
    later = layer.variants[1:]
    if not leaves_constant_channels_out(layer.data):
        return later
    return [v for v in later if GEMM_BY_ID[v.kernel].weights == "fused" and GEMM_BY_ID[v.kernel].rows == 2]


def code_fitting_tuning(compiled: CompiledModel, layers: Iterable[Layer], tuning: Tuning, board: Board,
                        fitted: frozenset[str]) -> tuple[Tuning, frozenset[str]] | None:
    """On a board whose code misses are expensive (code_cache_bytes), the tuning of the next compile and the keys of
    the layers this rule moved (`fitted`: those it moved before): a layer `tuning` leaves to its default whose
    default's own code in `compiled` (CompiledOp.code_bytes) is larger than the fetch cache takes the next of its
    code_fitting_variants, and so does a moved layer whose variant's code is still larger, until one fits (or is one of
    HOT_CODE_FITS); one none of whose variants fits returns to its default. None: no change (no such board, no code
    sizes, nothing larger than the cache left to try)."""
    cache = code_cache_bytes(board)
    if cache is None:
        return None
    code = {op.layer_key: op.code_bytes for op in compiled.ops if op.layer_key is not None}
    variants, moved = dict(tuning.variants), set(fitted)
    for layer in {layer.key: layer for layer in layers}.values():
        fits = (code.get(layer.key) or 0) <= cache or variants.get(layer.key) in HOT_CODE_FITS
        if fits or (layer.key in fitted) != (layer.key in variants):
            continue   # fits, a tuning file's variant, or back on its default
        candidates = code_fitting_variants(layer)
        later = candidates[candidates.index(variants[layer.key]) + 1:] if layer.key in fitted else candidates
        if later:
            variants[layer.key] = later[0]
            moved.add(layer.key)
        else:
            variants.pop(layer.key, None)
    if variants == tuning.variants:
        return None
    return Tuning(variants, tuning.source), frozenset(moved)


def state_region_bytes(graph: Graph, steps: list[Step]) -> int:
    """The state region: the variable tensors and the ops' own state (ops.base.State)."""
    own = sum(a.size * np.dtype(a.dtype).itemsize for _, low in steps for kernel in low.kernels
              for a in kernel.args if isinstance(a, State))
    return sum(t.nbytes for t in graph.tensors if t.variable) + own


def place_arena(graph: Graph, steps: list[Step], storage: Storage, board: Board | None, workspace: str,
                what: str, constants: tuple[RamConstants, ...] = ()) -> tuple[Pool, ...]:
    """The arena's pools by RAM region for a board with several (regions.py), beside the `constants` copied
    into them; () for one arena: no board, a board with one region, or a workspace the caller passes."""
    if board is None or len(board.ram_regions) < 2 or workspace != "internal":
        return ()
    taken = {share.name: sum(footprint(*a) for a in share.arrays) for share in constants}
    return place_in_regions(storage.plan, board.ram_regions, _system_reserved(graph, steps), what, taken)


def _system_reserved(graph: Graph, steps: list[Step]) -> int:
    return system_reserved(state_region_bytes(graph, steps))


def place_constants(graph: Graph, steps: list[Step], storage: Storage, board: Board | None, module: str,
                    what: str) -> tuple[aot.ConstantsInRam, tuple[RamConstants, ...]]:
    """Where --weights-in-ram copies the constants: the board's fastest RAM region that holds them all, else
    split across its regions, each array whole in one (regions.constants_regions); without a board, the
    system RAM's .data. The placement, and the constants by region in the board's order."""
    arrays = aot.constant_pool(graph, steps, storage, module).arrays
    system = board.system_region.name if board else "RAM"
    footprints = {c.symbol: footprint(c.nbytes, c.align) for c in arrays}
    region_of = constants_regions(footprints, sum(c.nbytes for c in arrays), board.ram_regions,
                                  _system_reserved(graph, steps), what) if board else dict.fromkeys(footprints, system)
    shares = by_region([r.name for r in board.ram_regions] if board else [system],
                       [(region_of[c.symbol], c.nbytes, c.align) for c in arrays])
    return aot.ConstantsInRam(region_of, system, tuple(share.name for share in shares)), shares


@dataclass(frozen=True)
class _CompileInputs:
    """A model read and prepared, and what each of its compiles takes besides the variants."""

    graph: Graph
    prepared: list[OpData]
    model_name: str
    cpu: Cpu
    board: Board | None
    module: str
    workspace: str
    max_ram: int | None
    max_recompute: float
    weights_in_ram: bool


def compile_model(model: str | Path | Graph, out_dir: str | Path, *, cpu: str | Cpu | None = None,
                  board: str | Board | None = None, module_name: str = "default", workspace: str = "internal",
                  force: bool = False, tuning: Tuning | None = None, max_ram: int | None = None,
                  max_recompute: float = DEFAULT_MAX_RECOMPUTE, weights_in_ram: bool = False) -> CompiledModel:
    """Compile `model` (its file, or its graph already read) into a C library folder at `out_dir` (written
    atomically); layers whose key `tuning` holds take its variant, the others the default (on a board with slow
    flash, their leanest variant where only its constants fit the flash's cache: cache_fitting_tuning). When
    the arena is above `max_ram` (default: what `board`'s RAM leaves for it), the layers where it peaks are
    tiled (codegen/tiling.py) for the lowest arena within `max_recompute` extra instructions (estimated:
    recomputed MACs, kernel calls, moved rows; the CPU's Costs); a model whose arena still exceeds `max_ram`
    is refused. With `board`, refuse a model that does not fit it (budget.py). `weights_in_ram`: the constants
    are initialised data copied from flash into RAM at startup (place_constants), their bytes taken from the
    arena's room. On a board whose code misses are expensive, GEMM layers of several rows whose kernel code
    overflows the fetch cache take the first variant whose code fits it (_compile_for_board)."""
    board_info = board if isinstance(board, Board) or board is None else get_board(board)
    cpu_obj = cpu if isinstance(cpu, Cpu) else get_cpu(cpu) if cpu else (   # the board's, as Zephyr builds it
        board_info.cpu if board_info else get_cpu(DEFAULT_CPU))
    module = module_identifier(module_name)   # a prefix: tvmgen_<module>_run
    if workspace not in ("internal", "external"):
        raise ModelError(f"--workspace must be 'internal' or 'external', not '{workspace}'")
    if max_ram is not None and max_ram < 0:
        raise ModelError(f"--max-ram {max_ram}: must be 0 or more bytes")
    if not 0 <= max_recompute <= 10:
        raise ModelError(f"--max-recompute {max_recompute:g}: must be a fraction of the MACs between 0 and 10")

    model_path = model.source if isinstance(model, Graph) else Path(model)
    with ui.step(f"reading {model_path.name}"):
        graph = as_graph(model)
        prepared = early_last_readers(graph, check_supported(graph, cpu_obj))
    inputs = _CompileInputs(graph, prepared, model_path.name, cpu_obj, board_info, module, workspace, max_ram,
                            max_recompute, weights_in_ram)
    compiled, files = _compile_for_board(inputs, tuning or Tuning())
    with atomic_output_dir(Path(out_dir), force=force, inputs=[model_path]) as tmp:
        for rel, text in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)
        compiled.write_metadata(tmp)
    return replace(compiled, path=Path(out_dir).resolve())


def _compile_for_board(inputs: _CompileInputs, tuning: Tuning) -> tuple[CompiledModel, dict[str, str]]:
    """The model compiled with `tuning` and its files; with a board, compiled again until it is stable: while GEMM
    layers' kernel code overflows a fetch cache whose misses are expensive (code_fitting_tuning, one variant a layer
    a compile), then, if it takes more flash than the board has, with the layers whose default weights take more
    than they must on their leanest variant (leanest_tuning); then checked against the board (budget.py)."""
    board = inputs.board
    code_fitted: frozenset[str] = frozenset()   # the layer keys code_fitting_tuning moved so far
    while True:
        tuning = cache_fitting_tuning(inputs.prepared, tuning, board, inputs.weights_in_ram)
        compiled, files, layers = _compile_once(inputs, tuning)
        if board is None:
            return compiled, files
        fitting = code_fitting_tuning(compiled, layers, tuning, board, code_fitted)
        if fitting is not None:
            if not code_fitted:
                ui.info(f"{inputs.model_name}: GEMM layers whose kernel code overflows {board.budget_name}'s "
                        f"{code_cache_bytes(board):,} B fetch cache take the first variant whose code fits it")
            tuning, code_fitted = fitting
            continue
        lean = leanest_tuning(layers, tuning)
        if flash_bytes(compiled) > board.flash_bytes and lean is not None:
            ui.info(f"{inputs.model_name}: {flash_bytes(compiled):,} B of flash is more than {board.budget_name}'s "
                    f"{board.flash_bytes:,} B: the layers whose default weights take more flash than they must "
                    "(Winograd's) take their leanest variant")
            tuning = lean
            continue
        check_fits(compiled, board)
        return compiled, files


def _compile_once(inputs: _CompileInputs, tuning: Tuning) -> tuple[CompiledModel, dict[str, str], list[Layer]]:
    """The model compiled with the variants `tuning` holds (the other layers on their default): its metadata, its
    files by path, its tunable layers."""
    graph, prepared, model_name, cpu_obj, board_info = (inputs.graph, inputs.prepared, inputs.model_name, inputs.cpu,
                                                       inputs.board)
    module, workspace, max_ram, max_recompute, weights_in_ram = (inputs.module, inputs.workspace, inputs.max_ram,
                                                                 inputs.max_recompute, inputs.weights_in_ram)
    what = f"{model_name} does not fit {board_info.budget_name if board_info else ''}"
    with ui.step(f"lowering {len(graph.ops)} ops through TVM TE/TIR for {cpu_obj.name}"):
        steps, layers = lower_ops(prepared, tuning)
        steps, aliases = join_aliases(graph, steps)
        storage = plan_storage(graph, steps, aliases)
        steps, storage = chunk_scratch(graph, prepared, steps, aliases, storage)
        in_ram, ram_constants = place_constants(graph, steps, storage, board_info, module, what) \
            if weights_in_ram else (None, ())
        limit = max_ram if max_ram is not None or board_info is None else arena_room(
            board_info, state_region_bytes(graph, steps), constants_in_ram=in_ram_bytes(ram_constants))
        untiled = steps
    tiling = None
    if limit is not None and storage.plan.arena_bytes > limit:
        untiled_live = live_bytes(storage.plan.buffers, len(steps))   # the memory plot's "untiled" curve
        tiled = tiled_within(graph, prepared, steps, aliases, storage, limit, max_recompute, cpu_obj.costs)
        leaner, leaner_storage = steps, storage
        while tiled[1].plan.arena_bytes > limit:   # the leaner variants (Winograd's F(2x2), its GEMM), tiled
            lean, lean_storage = lean_scratch(graph, prepared, leaner, aliases, leaner_storage, limit)
            if lean is leaner:
                break
            leaner, leaner_storage = lean, lean_storage
            lean_tiled = tiled_within(graph, prepared, lean, aliases, lean_storage, limit, max_recompute, cpu_obj.costs)
            if lean_tiled[1].plan.arena_bytes < tiled[1].plan.arena_bytes:
                untiled, untiled_live, tiled = lean, live_bytes(lean_storage.plan.buffers, len(lean)), lean_tiled
        steps, storage, tiling = tiled
        if max_ram is not None and storage.plan.arena_bytes > max_ram:
            raise ModelError(f"{model_name}: arena {tiling.untiled_arena_bytes:,} B untiled, at best "
                             f"{storage.plan.arena_bytes:,} B tiled within {max_recompute:.0%} extra instructions; "
                             f"--max-ram {max_ram:,} B", hint="raise --max-ram or --max-recompute")
    if not weights_in_ram:   # in the room tiling leaves, the tiled stages' layers unstaged
        in_stages = {i for i, ((_, low), (_, own)) in enumerate(zip(steps, untiled)) if low is not own}
        steps, storage = stage_constants(graph, prepared, steps, aliases, storage, board_info, limit, in_stages)
        untiled = [own if i in in_stages else step for i, (step, own) in enumerate(zip(steps, untiled))]
    one_stream = board_info is not None and one_stream_flash(board_info)
    with ui.step("generating C"):
        if weights_in_ram:   # tiling or a leaner variant may have changed them
            in_ram, ram_constants = place_constants(graph, steps, storage, board_info, module, what)
        pools = place_arena(graph, steps, storage, board_info, workspace, what, ram_constants)
        steps = ordered_steps(steps, storage)   # the final offsets say which way an overwriting layer runs
        program = aot.build_program(graph, steps, storage, module, model_name, workspace == "external", pools,
                                    in_ram)
        files = {
            f"include/tvmgen_{module}.h": program.header(),
            f"src/tvmgen_{module}.c": program.run_source(),
            f"src/tvmgen_{module}_kernels.c": program.kernels.source(cpu_obj, one_stream),
        }
        files.update({f"src/{project_name(rel)}": (C_DIR / rel).read_text()
                      for rel in program.kernels.c_files(cpu_obj, one_stream)})

    plan = storage.plan
    code = measure_code(files, cpu_obj, f"tvmgen_{module}_")
    own_code = code.own_code(*_code_owners(prepared, untiled, program, layers))
    io_bytes = sum(t.bytes for t in program.inputs + program.outputs)
    state_bytes = sum(s.bytes for s in program.states.values())
    compiled = CompiledModel(
        module=module, model=model_name,
        target=CompiledTarget(cpu_obj.name, cpu_obj.dsp, cpu_obj.mve, cpu_obj.fpu,
                              board_info.name if board_info else None),
        inputs=program.inputs, outputs=program.outputs,
        ops=tuple(_compiled_op(data, low, program, layers.get(data.op.index), tiled is not low, own_code)
                  for data, (_, low), (_, tiled) in zip(prepared, untiled, steps)),
        memory=MemoryUse(
            workspace=workspace, arena_bytes=program.arena_bytes, lower_bound_bytes=plan.lower_bound_bytes,
            io_bytes=io_bytes, constant_bytes=program.constants.nbytes, code_bytes=code.code_bytes,
            stack_bytes=code.stack_bytes,
            plan=tuple(sorted(plan.buffers, key=lambda b: (b.pool, b.first_use, b.offset))),
            state_bytes=state_bytes, live_bytes=tuple(live_bytes(plan.buffers, len(steps))),
            arena_limit_bytes=arena_room(board_info, state_bytes, stack_reservation(code.stack_bytes),
                                         in_ram_bytes(ram_constants)) if board_info else None,
            regions=tuple(RegionUse(p.region, p.nbytes, p.capacity, tuple(live_bytes(plan.buffers, len(steps), p.region)))
                          for p in pools),
            tiling=replace(tiling, untiled_live_bytes=tuple(untiled_live)) if tiling else None,
            constants_in_ram=ram_constants),
        files=tuple(sorted(files)),
        state=tuple(program.states.values()))
    files.update(fragments(compiled, folder_layout(compiled)))   # CMakeLists.txt, tvmgen_<module>.mk
    compiled = replace(compiled, files=tuple(sorted(files)))
    return compiled, files, list(layers.values())


def _code_owner(data: OpData, layer: Layer | None) -> str | int:
    """Whose code an op's is: its layer key's (every op of a key runs one kernel), else its own."""
    return layer.key if layer else data.op.index


def _code_owners(prepared: list[OpData], steps: list[Step], program: aot.AotProgram, layers: dict[int, Layer]
                 ) -> tuple[dict[str | int, set[str]], dict[str | int, str | int]]:
    """The C functions each code owner's ops call, and what each owner's kernels are (a tunable layer's: its
    variant's id, so that a kernel only layers of one variant call is priced as each one's)."""
    owners: dict[str | int, set[str]] = {}
    kinds: dict[str | int, str | int] = {}
    for data, (_, low) in zip(prepared, steps):
        layer = layers.get(data.op.index)
        owner = _code_owner(data, layer)
        owners.setdefault(owner, set()).update(program.symbols(data.op.index))
        kinds[owner] = low.variant.label if layer else owner
    return owners, kinds


def _compiled_op(data: OpData, low: Lowered, program: aot.AotProgram, layer: Layer | None, tiled: bool,
                 own_code: dict[str | int, int] | None) -> CompiledOp:
    """`low`: the op's untiled kernels; `tiled`: it runs in a tiled stage (whose calls the stage's first op lists);
    `own_code`: by code owner (_code_owner), the code its ops' kernels take as if alone (code_size.own_code)."""
    op = data.op
    symbols = list(dict.fromkeys(program.symbols(op.index)))
    impl = "alias" if not low.kernels else "+".join(sorted({k.impl for k in low.kernels}))
    return CompiledOp(
        index=op.index, type=op.type,
        input_shapes=[list(t.shape) if t is not None else None for t in data.inputs],
        output_shape=list(data.output.shape),
        macs=op_def(op.type).macs(data),
        kernel=symbols[0] if len(symbols) == 1 else (symbols or None),
        impl=impl, layer_key=layer.key if layer else None, variant=low.variant.to_json() if layer else None,
        tiled=tiled, code_bytes=own_code[_code_owner(data, layer)] if own_code is not None else None)
