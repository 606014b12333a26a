"""Fuzz campaign: seeded mutants of the shared models and of tests/modelgen.py's examples
through reader + validation + op checks + lowering (the whole compile to C), and through the real CLI.

    nice -n 10 python bench/fuzz_campaign.py --cases 100000              # reader .. lowering
    nice -n 10 python bench/fuzz_campaign.py --cases 500 --cli           # `mtk compile` in a subprocess
    nice -n 10 python bench/fuzz_campaign.py --cases 30000 --start 70000 # one of several parallel ranges
    nice -n 10 python bench/fuzz_campaign.py --cases 2000 --cli-inputs --max-seconds 3600   # bench/cli_cases.py
    nice -n 10 python bench/fuzz_campaign.py --cases 200 --cli-inputs --cli-fresh   # a new interpreter a case
    nice -n 10 python bench/fuzz_campaign.py --cases 20000 --data        # .npy/.npz through the data readers

Each case runs in a worker process with a deadline (a case past it counts as a hang and the
worker is replaced). Outcomes: `refused` (an MtkError: exit 2 on the CLI) at the reader/validation
or at the op checks or during lowering, `compiled`, `crash` (any other exception: a bug) and
`hang`. A mutant that passes the checks is lowered once per structure: mutants that differ from
an already lowered one only in constant data larger than 64 elements (weights flipped by a bit)
(or in tensor names) count as `compiled (same structure)` with the first one's outcome, so the campaign spends its time
on new structures. With --cli every case is `python -m mtk.cli compile` with its exit code and
stderr: a `Traceback` or an exit code other than 0/2/3 counts against it.
Prints counts per outcome (and --json FILE writes them); exit 1 if any crash, hang or traceback.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
SHARED = ROOT.parent / "shared" / "models"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/models")


def seeds() -> list[tuple[str, bytes]]:
    import modelgen
    found = [(p.stem, p.read_bytes()) for p in sorted(SHARED.glob("*.tflite"))]
    found += [(f"modelgen:{k}", v) for k, v in modelgen.example_models(0).items()]
    return found


def mutant(seed_models: list[tuple[str, bytes]], campaign_seed: int, case: int) -> tuple[str, str, bytes]:
    from model_mutator import mutate
    rng = random.Random(f"{campaign_seed}:{case}")
    # Small models are lowered in a fraction of a second; the shared ones take seconds: 1 case in 8.
    name, data = rng.choice(seed_models[:3]) if rng.random() < 0.125 and len(seed_models) > 3 else \
        rng.choice(seed_models[3:] or seed_models)
    kind, out = mutate(data, rng)
    return name, kind, out


def structure_key(graph) -> str:
    h = hashlib.sha256()
    for t in graph.tensors:   # names only reach C identifiers and comments: the --cli cases build that C
        h.update(repr((t.shape, t.dtype, None if t.quant is None else
                       (t.quant.scale.tobytes(), t.quant.zero_point.tobytes(), t.quant.axis))).encode())
        if t.data is not None:
            h.update(t.data.tobytes() if t.data.size <= 64 else repr(t.data.shape).encode())
    for op in graph.ops:
        h.update(repr((op.type, op.inputs, op.outputs, sorted(op.options.items()))).encode())
    h.update(repr((graph.inputs, graph.outputs)).encode())
    return h.hexdigest()


def _where(err: BaseException) -> str:
    frame = traceback.extract_tb(err.__traceback__)[-1]
    return f"{type(err).__name__} at {Path(frame.filename).name}:{frame.lineno}"


def worker(conn, campaign_seed: int, work: str) -> None:
    """Answers ("check", case) with (outcome, detail, key) and ("lower", case) with (outcome, detail)."""
    import warnings
    warnings.filterwarnings("ignore")
    from mtk import compiler
    from mtk.errors import MtkError
    from mtk.reader import read_model
    compiler.measure_code_bytes = lambda *args, **kwargs: None   # the C is compiled by the --cli cases
    models = seeds()
    path = Path(work) / f"m{os.getpid()}.tflite"
    while True:
        request, case = conn.recv()
        name, kind, data = mutant(models, campaign_seed, case)
        path.write_bytes(data)
        try:
            if request == "check":
                try:
                    graph = read_model(path)
                except MtkError:
                    conn.send(("refused: reader/validation", "", None))
                    continue
                compiler.check_supported(graph)
                conn.send(("checked", "", structure_key(graph)))
            else:
                compiler.compile_model(path, Path(work) / f"out{os.getpid()}", force=True)
                conn.send(("compiled", "", None))
        except MtkError as err:
            conn.send((f"refused: {'op checks' if request == 'check' else 'lowering'}", str(err).splitlines()[0][:200], None))
        except BaseException as err:   # noqa: BLE001 (what the campaign is looking for)
            conn.send(("crash", f"{_where(err)}: {str(err)[:200]} [{name}, {kind}, case {case}]", None))


DATA_MODEL = ROOT / "models" / "digits_cnn_int8.tflite"   # one int8 input (1, 8, 8, 1)
DATA_WORKER_BYTES = 3 << 30    # address space of a data worker: reading more is a finding (MemoryError)


def data_worker(conn, campaign_seed: int, work: str) -> None:
    """Answers ("data", case) with (outcome, detail, None): a mutant .npy/.npz through the three readers
    (`run --input` samples, calibration data, evaluation labels)."""
    import resource
    import warnings
    warnings.filterwarnings("ignore")
    from data_mutator import mutate_data
    from mtk.errors import MtkError
    from mtk.evaluation import load_labels
    from mtk.samples import load_samples
    from mtk.quantize import load_dataset
    resource.setrlimit(resource.RLIMIT_AS, (DATA_WORKER_BYTES, DATA_WORKER_BYTES))
    readers = {"samples": lambda p: load_samples(p, DATA_MODEL), "calibration": lambda p: load_dataset(p, (1, 8, 8, 1)),
               "labels": load_labels}
    while True:
        _, case = conn.recv()
        rng = random.Random(f"data:{campaign_seed}:{case}")
        kind, name, data = mutate_data((8, 8, 1), rng)
        path = Path(work) / f"{os.getpid()}-{name}"
        path.write_bytes(data)
        outcomes = []
        for reader, read in readers.items():
            try:
                read(path)
                outcomes.append("read")
            except MtkError:
                outcomes.append("refused")
            except BaseException as err:   # noqa: BLE001 (what the campaign is looking for)
                conn.send(("crash", f"{reader}: {_where(err)}: {str(err)[:200]} [{kind}, case {case}]", None))
                break
        else:
            conn.send(("/".join(outcomes), "", None))


def data_campaign(cases: range, campaign_seed: int, timeout: float) -> dict:
    """Mutant data files (tests/data_mutator.py) through the readers, each case in a worker with a deadline."""
    counts: collections.Counter = collections.Counter()
    details: dict[str, list[str]] = collections.defaultdict(list)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="mtk-fuzz-data-") as work:
        w = Worker(campaign_seed, work, target=data_worker)
        try:
            for done, case in enumerate(cases, 1):
                outcome, detail, _ = w.ask("data", case, timeout)
                counts[outcome] += 1
                if outcome in ("crash", "hang") and len(details[outcome]) < 50:
                    details[outcome].append(detail)
                    print(f"{outcome}: {detail}", file=sys.stderr, flush=True)
                if done % 1000 == 0:
                    print(f"{done} data cases (to case {case}), {time.time() - start:.0f} s: {dict(counts)}",
                          file=sys.stderr, flush=True)
        finally:
            w.close()
    return {"cases": f"{cases.start}..{cases.stop - 1}", "seed": campaign_seed, "seconds": round(time.time() - start),
            "counts": dict(counts), "details": dict(details)}


class Worker:
    def __init__(self, campaign_seed: int, work: str, target=worker):
        self.args = (campaign_seed, work)
        self.target = target
        self.start()

    def start(self) -> None:
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=self.target, args=(child, *self.args), daemon=True)
        self.proc.start()

    def ask(self, request: str, case: int, timeout: float):
        self.conn.send((request, case))
        if self.conn.poll(timeout):
            return self.conn.recv()
        self.proc.kill()
        self.proc.join()
        self.start()
        return ("hang", f"{request} past {timeout:.0f} s [case {case}]", None)

    def close(self) -> None:
        self.proc.kill()
        self.proc.join()


def campaign(cases: range, campaign_seed: int, timeout: float) -> dict:
    counts: collections.Counter = collections.Counter()
    details: dict[str, list[str]] = collections.defaultdict(list)
    lowered: dict[str, str] = {}
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="mtk-fuzz-") as work:
        w = Worker(campaign_seed, work)
        try:
            for done, case in enumerate(cases, 1):
                outcome, detail, key = w.ask("check", case, timeout)
                if outcome == "checked":
                    if key in lowered:
                        outcome = lowered[key] + " (same structure)"
                    else:
                        outcome, detail, _ = w.ask("lower", case, timeout)
                        lowered[key] = outcome
                counts[outcome] += 1
                if outcome in ("crash", "hang") and len(details[outcome]) < 50:
                    details[outcome].append(detail)
                    print(f"{outcome}: {detail}", file=sys.stderr, flush=True)
                if done % 1000 == 0:
                    print(f"{done} cases (to case {case}), {time.time() - start:.0f} s: {dict(counts)}", file=sys.stderr, flush=True)
        finally:
            w.close()
    return {"cases": f"{cases.start}..{cases.stop - 1}", "seed": campaign_seed, "seconds": round(time.time() - start),
            "counts": dict(counts), "distinct_structures_lowered": len(lowered), "details": dict(details)}


def cli_campaign(cases: range, campaign_seed: int, timeout: float) -> dict:
    counts: collections.Counter = collections.Counter()
    details: dict[str, list[str]] = collections.defaultdict(list)
    models = seeds()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "toolkit"))
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="mtk-fuzz-cli-") as work:
        path = Path(work) / "model.tflite"
        for done, case in enumerate(cases, 1):
            name, kind, data = mutant(models, campaign_seed, case)
            path.write_bytes(data)
            try:
                proc = subprocess.run([sys.executable, "-m", "mtk.cli", "compile", str(path), "-o",
                                       str(Path(work) / "out"), "--force"],
                                      capture_output=True, text=True, timeout=timeout, env=env)
            except subprocess.TimeoutExpired:
                counts["hang"] += 1
                details["hang"].append(f"case {case} [{name}, {kind}]")
                continue
            traceback_seen = "Traceback" in proc.stderr
            outcome = "traceback" if traceback_seen else f"exit {proc.returncode}"
            counts[outcome] += 1
            if (traceback_seen or proc.returncode not in (0, 2, 3)) and len(details[outcome]) < 50:
                details[outcome].append(f"case {case} [{name}, {kind}]: {proc.stderr.strip().splitlines()[-1:]}")
            if done % 50 == 0:
                print(f"{done} CLI cases (to case {case}), {time.time() - start:.0f} s: {dict(counts)}", file=sys.stderr, flush=True)
    return {"cases": f"{cases.start}..{cases.stop - 1}", "seed": campaign_seed, "seconds": round(time.time() - start),
            "counts": dict(counts), "details": dict(details)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="first case number (runs in parallel take disjoint ranges)")
    parser.add_argument("--cli", action="store_true", help="run each case through `mtk compile` in a subprocess")
    parser.add_argument("--cli-inputs", action="store_true", help="CLI cases of names, strings, records read back, "
                        "output aliases, URLs and numbers (bench/cli_cases.py)")
    parser.add_argument("--cli-fresh", action="store_true", help="with --cli-inputs: a new interpreter for each "
                        "case (`python -m mtk`) instead of a process forked from one that imported mtk once")
    parser.add_argument("--max-seconds", type=float, help="with --cli-inputs: stop starting cases after this long")
    parser.add_argument("--data", action="store_true", help="mutant .npy/.npz data files through the data readers")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--json", type=Path, help="write the counts here")
    args = parser.parse_args()
    cases = range(args.start, args.start + args.cases)
    if args.cli_inputs:
        import cli_cases
        mtk = cli_cases.fresh_mtk if args.cli_fresh else cli_cases.ForkedMtk()
        result = cli_cases.campaign(cases, args.seed, args.timeout, args.max_seconds, mtk)
    else:
        run = cli_campaign if args.cli else data_campaign if args.data else campaign
        result = run(cases, args.seed, args.timeout)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    bad = {"crash", "hang", "traceback"} | {k for k in result["counts"] if k.startswith("exit ") and
                                              k not in ("exit 0", "exit 2", "exit 3")}
    bad |= {k for k in result["counts"] if args.cli_inputs and not k.endswith((": ok", "skipped"))}
    return 1 if any(result["counts"].get(k) for k in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
