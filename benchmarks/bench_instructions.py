"""Instructions per unit of work of the simulator and of the emulated trainer, commits side by side.

Wall and CPU times on a shared 2-core machine move by ±10% between runs of one tree (3× under
load), too much to hold a change to a 3% budget (issue 33); the instructions a run executes do
not depend on the load. The figure is each commit's marginal instructions over the first
commit's (new/base), per scheduler.

Method: every case is a fresh Python process under ``valgrind --tool=cachegrind --cache-sim=no
--smc-check=all-non-file``, whose Ir counts the instructions of all its threads. A case runs at
sizes N, 2N and 3N: start-up, imports, loading the compiled kernels, the warm-up and (for the
trainer) the trace, the model's set-up and the evaluation are the same at every size, so
(Ir(3N) − Ir(N)) / (work(3N) − work(N)) is the instructions per unit of work alone (work:
accesses simulated, ids generated, samples trained). The same over N→2N and 2N→3N apart shows
how steady the marginal is, and the last scheduler's N case runs twice on each commit to show
that a count repeats (Python's string hashes are seeded, PYTHONHASHSEED=0: a random seed moves
a count by ~10 M instructions). Each commit is cloned (bench_first_run.clone) and each case runs
once without valgrind first, compiling its kernels into numba's cache beside the clone's
sources, so that valgrind only loads them; numba compiles for one fixed CPU
(NUMBA_CPU_NAME=haswell, no extra features), as under valgrind the CPU looks different and numba
would miss its cache (a run that compiles is refused). MKL runs its SSE4.2 kernels
(MKL_ENABLE_INSTRUCTIONS=SSE4_2: its AVX2 sgemm runs ~15× slower under valgrind); torch, MKL and
OpenMP run one thread. The counts are so those of haswell-targeted kernels on valgrind's CPU,
alike for every commit.

Simulator: bench_simulator.py's case (``--one``) for every registered scheduler, on the
quickstart's workload (the criteo-kaggle profile) at 1% of its rows, 8 workers × 256, caches of
10% of the rows, LRU, N = 0.5% of Kaggle's samples (229,203); and generation alone
(``generate-ids``, per id), whose marginal taken off a scheduler's gives the simulation without
its trace (approximately: the chunk sizes differ). Trainer: bench_trainer.py's case (reference
DLRM, dim 16, 4 workers × 256, 10% caches, prefetch 2) on CPU, on one trace of 20,000 samples at
1% rows, training on its first N = 2,048 samples (2N, 3N), the held-out samples the same.

Run: ``python benchmarks/bench_instructions.py --simulator base=f3ab66d --simulator new=HEAD
--trainer base=bb93066 --trainer new=HEAD`` (about 2.5 hours on 2 cores; a valgrind run takes 1
to 4 minutes, one at a time). ``--scratch DIR`` keeps the clones (their kernels compiled) and
``--log FILE`` each measured row, for a later run to reuse; ``--parts simulator`` measures one.
A record leaving out a registered scheduler, a default trainer kind or a part names them
(``settings.not_measured``) and is marked ``partial``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import write_record
from bench_first_run import ROOT, clone
from bench_simulator import case_command, tree_env

HERE = Path(__file__).resolve().parent
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--smc-check=all-non-file"]
FIXED_ENV = {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "", "OMP_NUM_THREADS": "1",
             "MKL_NUM_THREADS": "1", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
             "PYTHONHASHSEED": "0"}  # fmt: skip
BUDGET = 0.03
MULTIPLES = (1, 2, 3)
SPANS = ("all", "first", "second")  # N→3N, N→2N, 2N→3N
TRAINER_KINDS = ("naive", "herald", "het", "fae")
_PURPOSE = __doc__.split("\n\n")[:2]  # what the record says it measured


def checkout(rev: str, scratch: Path) -> tuple[Path, str]:
    """A clone of this repository at ``rev`` under ``scratch`` (reused when there); its path and
    short commit id."""
    commit = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    path = scratch / commit
    if not (path / ".git").exists():
        clone(commit, path)
    return path, commit


def case_env(tree: Path) -> dict[str, str]:
    """The environment of a case on ``tree``'s code: its sources first on PYTHONPATH, numba's
    cache beside them, the fixed CPU target and one thread."""
    env = tree_env(str(tree)) | FIXED_ENV
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def _compiled(tree: Path) -> int:
    return sum(1 for _ in tree.rglob("*.nbc"))


def count(command: list[str], tree: Path, out: Path) -> dict:
    """Ir of ``command`` under cachegrind on ``tree``'s code, the wall seconds and the case's
    own figures (its last line of output, JSON)."""
    before, start = _compiled(tree), time.perf_counter()
    done = subprocess.run([*VALGRIND, f"--cachegrind-out-file={out}", *command],
                          capture_output=True, text=True, env=case_env(tree), check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed under valgrind:\n{done.stderr[-3000:]}")
    if _compiled(tree) != before:
        raise RuntimeError(f"numba compiled under valgrind (warm {tree} first): {command}")
    case = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(case["source"]).is_relative_to(tree):
        raise RuntimeError(f"{command} ran the code of {case['source']}, not of {tree}")
    summary = next(line for line in out.read_text().splitlines() if line.startswith("summary:"))
    return {"ir": int(summary.split()[1]), "valgrind_seconds": round(time.perf_counter() - start),
            "case": case}


def simulator_command(kind: str, multiple: int, args: argparse.Namespace) -> list[str]:
    settings = argparse.Namespace(workers=8, batch_size=256, cache_ratio=0.1, scale=args.scale)
    return case_command(args.fraction * multiple, kind, "criteo-kaggle", settings)


def trainer_command(kind: str, multiple: int, args: argparse.Namespace) -> list[str]:
    return [sys.executable, str(HERE / "bench_trainer.py"), "--one", kind,
            "--samples", str(args.trace_samples), "--train-samples", str(args.samples * multiple),
            "--scale", str(args.scale), "--device", "cpu", "--threads", "1"]  # fmt: skip


def work_of(case: dict) -> int:
    """The units of work of a case's figures: accesses, ids generated or samples trained."""
    return case.get("accesses") or case.get("ids") or case["samples_trained"]


class Log:
    """Measured rows by (commit, command), kept in a JSON-lines file when given."""

    def __init__(self, path: Path | None):
        self.path, self.rows = path, {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                row = json.loads(line)
                self.rows[(row["commit"], row["command"])] = row

    def get(self, commit: str, command: str) -> dict | None:
        return self.rows.get((commit, command))

    def add(self, row: dict) -> None:
        self.rows[(row["commit"], row["command"])] = row
        if self.path is not None:
            with self.path.open("a") as file:
                file.write(json.dumps(row) + "\n")


def measure_case(part: str, kind: str, tree: tuple[str, Path, str], command: list[str],
                 log: Log, scratch: Path, attempt: int = 0) -> dict:
    """One case's row, from the log or measured (its kernels compiled first, without valgrind)."""
    name, path, commit = tree
    key = " ".join(command[1:]) + (f" #{attempt}" if attempt else "")
    row = log.get(commit, key)
    if row is None:
        subprocess.run(command, env=case_env(path), capture_output=True, check=True)
        figures = count(command, path, scratch / "cachegrind.out")
        row = {"part": part, "scheduler": kind, "tree": name, "commit": commit, "command": key,
               **figures}  # fmt: skip
        log.add(row)
    work = work_of(row["case"])
    print(f"{part:9} {kind:22} {name:6} {commit} work {work:>11,} Ir {row['ir']:>17,} "
          f"({row['valgrind_seconds']} s)", flush=True)
    return {**row, "work": work}


def measure(part: str, kinds: list[str], trees: list[tuple[str, Path, str]], command_of,
            args: argparse.Namespace, log: Log) -> list[dict]:
    """Every (scheduler, commit, size) of a part; the last scheduler's N again on each commit."""
    rows = []
    for kind in kinds:
        for tree in trees:
            for multiple in MULTIPLES:
                command = command_of(kind, multiple, args)
                rows.append({**measure_case(part, kind, tree, command, log, args.scratch),
                             "multiple": multiple})  # fmt: skip
    for tree in trees if part not in args.skip_repeat else []:
        command = command_of(kinds[-1], MULTIPLES[0], args)
        rows.append({**measure_case(part, kinds[-1], tree, command, log, args.scratch, 1),
                     "multiple": 0})  # fmt: skip
    return rows


def _marginal(points: dict[int, dict], low: int, high: int) -> float:
    return (points[high]["ir"] - points[low]["ir"]) / (points[high]["work"] - points[low]["work"])


def marginals(rows: list[dict]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (scheduler, commit name): marginal Ir per unit over N→3N, N→2N and 2N→3N."""
    points: dict[tuple[str, str], dict[int, dict]] = {}
    for row in rows:
        points.setdefault((row["scheduler"], row["tree"]), {})[row["multiple"]] = row
    return {key: {"all": _marginal(p, 1, 3), "first": _marginal(p, 1, 2),
                  "second": _marginal(p, 2, 3)} for key, p in points.items()}  # fmt: skip


def verdicts(rows: list[dict], names: list[str], minus: str | None = None) -> list[dict]:
    """A row per scheduler: each commit's marginal, new/base over N→3N, N→2N and 2N→3N, how
    far a commit's two halves differ, and whether new/base is within the budget. ``minus``: a
    kind whose marginal is also taken off each scheduler's (generation under the simulator)."""
    found, base, table = marginals(rows), names[0], []
    for kind in dict.fromkeys(row["scheduler"] for row in rows):
        row: dict = {"scheduler": kind}
        for name in names:
            row[f"Ir/unit {name}"] = round(found[kind, name]["all"], 2)
        for name in names[1:]:
            ratios = [found[kind, name][s] / found[kind, base][s] for s in SPANS]
            row[f"{name}/{base}"] = round(ratios[0], 4)
            row[f"{name}/{base} N→2N, 2N→3N"] = f"{ratios[1]:.4f}, {ratios[2]:.4f}"
            row["within 3%"] = abs(ratios[0] - 1) <= BUDGET and row.get("within 3%", True)
            if minus is not None and kind != minus:
                alone = [found[kind, n]["all"] - found[minus, n]["all"] for n in (name, base)]
                row[f"{name}/{base} without generation"] = round(alone[0] / alone[1], 4)
        row["halves differ"] = round(max(abs(found[kind, n]["second"] / found[kind, n]["first"] - 1)
                                         for n in names), 4)  # fmt: skip
        table.append(row)
    return table


def repeats(rows: list[dict]) -> dict[str, float]:
    """Per commit name: the relative difference of the repeated case's two counts."""
    first = {(r["scheduler"], r["tree"]): r["ir"] for r in rows if r["multiple"] == 1}
    return {r["tree"]: round(r["ir"] / first[r["scheduler"], r["tree"]] - 1, 6)
            for r in rows if r["multiple"] == 0}  # fmt: skip


def part_figures(part: str, unit: str, kinds: list[str], given: list[str], command_of,
                 args: argparse.Namespace, log: Log, minus: str | None = None) -> dict:
    trees = []
    for item in given:
        name, _, rev = item.partition("=")
        trees.append((name, *checkout(rev, args.scratch)))
    rows = measure(part, kinds, trees, command_of, args, log)
    names = [name for name, _, _ in trees]
    figures = {"unit": unit, "commits": {name: commit for name, _, commit in trees},
               "verdicts": verdicts(rows, names, minus), "repeat_difference": repeats(rows)}
    respell = [kind for kind in args.respell if kind in kinds] if part == "simulator" else []
    if respell:
        figures["layout_check"] = layout_check(rows, respell, trees, names, args, log, minus)
    figures["runs"] = [{k: r[k] for k in ("scheduler", "tree", "multiple", "work", "ir",
                                          "valgrind_seconds")} for r in rows]  # fmt: skip
    return figures


def layout_check(rows: list[dict], kinds: list[str], trees: list[tuple[str, Path, str]],
                 names: list[str], args: argparse.Namespace, log: Log,
                 minus: str | None) -> dict:  # fmt: skip
    """``kinds``' cases again at every size with the fraction written with one (and two) more
    zeros: the same work in a process otherwise laid out (the interpreter's own work around the
    compiled kernels, dictionary and type-attribute lookups above all, was seen to move with
    such a detail). Each size's count is the median of the spellings (of two: their mean);
    verdicts on those."""
    spelled = []
    for kind in kinds:
        for tree in trees:
            for multiple in MULTIPLES:
                for zeros in ("0", "00")[:args.spellings - 1]:
                    command = simulator_command(kind, multiple, args)
                    command[command.index("--one") + 1] += zeros
                    spelled.append({**measure_case("simulator", kind, tree, command, log,
                                                   args.scratch), "multiple": multiple})
    groups: dict[tuple, list[dict]] = {}
    for row in [*rows, *spelled]:
        if row["scheduler"] in kinds and row["multiple"] in MULTIPLES:
            groups.setdefault((row["scheduler"], row["tree"], row["multiple"]), []).append(row)
    medians = [{**g[0], "ir": statistics.median(r["ir"] for r in g)} for g in groups.values()]
    others = [r for r in rows if r["scheduler"] == minus and r["multiple"] in MULTIPLES]
    return {"kinds": kinds, "spellings": args.spellings,
            "count_range": {f"{k} {t} {m}N": max(r["ir"] for r in g) - min(r["ir"] for r in g)
                            for (k, t, m), g in groups.items()},
            "verdicts": verdicts([*others, *medians], names, minus)}  # fmt: skip


def _registered() -> list[str]:
    from heraldbench.platform.schedulers import registered

    return list(registered())


def not_measured(figures: dict) -> dict[str, list[str]]:
    """Per part, the registered schedulers (simulator) or default kinds (trainer) this record
    leaves out: a record with any is partial."""
    wanted = {"simulator": ["generate-ids", *_registered()], "trainer": list(TRAINER_KINDS)}
    missing = {}
    for part, kinds in wanted.items():
        done = {row["scheduler"] for row in figures.get(part, {}).get("verdicts", [])}
        if left := [kind for kind in kinds if kind not in done]:
            missing[part] = left
    return missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulator", action="append", default=[], metavar="NAME=REV")
    parser.add_argument("--trainer", action="append", default=[], metavar="NAME=REV")
    parser.add_argument("--parts", nargs="+", default=["simulator", "trainer"])
    parser.add_argument("--schedulers", nargs="+", default=None, help="default: all registered")
    parser.add_argument("--trainer-schedulers", nargs="+", default=list(TRAINER_KINDS))
    parser.add_argument("--respell", nargs="+", default=[], metavar="SCHEDULER",
                        help="simulator's cases also measured with the fraction respelled")
    parser.add_argument("--spellings", type=int, choices=(2, 3), default=3,
                        help="layouts of --respell's cases: the fraction written 2 or 3 ways")
    parser.add_argument("--skip-repeat", nargs="+", default=[], metavar="PART",
                        help="parts whose repeated case is left out (no repeat_difference)")
    parser.add_argument("--fraction", type=float, default=0.005, help="simulator's N (of Kaggle)")
    parser.add_argument("--scale", type=float, default=0.01, help="rows, of full cardinalities")
    parser.add_argument("--samples", type=int, default=2048, help="trainer's N")
    parser.add_argument("--trace-samples", type=int, default=20_000)
    parser.add_argument("--scratch", type=Path, default=None, help="clones (kept); default: temp")
    parser.add_argument("--log", type=Path, default=None, help="rows measured (JSON lines)")
    args = parser.parse_args()
    args.scratch = args.scratch or Path(tempfile.mkdtemp(prefix="heraldbench-instructions-"))
    args.scratch.mkdir(parents=True, exist_ok=True)
    log = Log(args.log)
    figures = {"settings": {"valgrind": " ".join(VALGRIND), "environment": FIXED_ENV,
                            "sizes": "N, 2N, 3N", "budget": BUDGET}}  # fmt: skip
    if "simulator" in args.parts and len(args.simulator) > 1:
        kinds = ["generate-ids", *(args.schedulers or _registered())]
        figures["simulator"] = part_figures("simulator", "access (generate-ids: id)", kinds,
                                            args.simulator, simulator_command, args, log,
                                            "generate-ids")  # fmt: skip
    if "trainer" in args.parts and len(args.trainer) > 1:
        figures["trainer"] = part_figures("trainer", "sample trained", args.trainer_schedulers,
                                          args.trainer, trainer_command, args, log)
    figures["settings"]["not_measured"] = not_measured(figures)
    figures["partial"] = bool(figures["settings"]["not_measured"])
    print(json.dumps(figures, indent=1))
    print(write_record("instructions", figures, doc=" ".join(" ".join(_PURPOSE).split())))


if __name__ == "__main__":
    main()
