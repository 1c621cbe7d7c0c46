"""The time model, checked (issue 17 item 5): profile-cluster, then a distributed training of
naive, Herald, HET, FAE and BagPipe on that profile, on 2 and 4 ranks; prints the modelled vs
measured iteration time per scheduler, their ratio and whether the speedup order agrees.

    PYTHONPATH=platform:pipelines:api flock /work/cpu.lock \\
        python benchmarks/time_model_check.py --ranks 2 --ranks 4 --samples 65536 --repeat 3 \\
        --out /tmp/tmc

For each rank count it writes ``profile-<R>r.yaml`` (the measured profile), ``spec-<R>r.yaml``
and ``train-<R>r.json`` (the run document, with ``time_check``) under ``--out``. The profile is
measured right before the training, under the same load, as the model is meant to be used.

Shaped links (root; ``train.distributed.links``, docs/time-model.md): ``--link RATE`` (repeat it
for several speeds) puts every rank in a network namespace on tc-shaped veths, or, with
``--ranks-per-host N --inside-link RATE``, groups ranks as hosts (``--link`` between hosts); each
speed is checked in turn, its files named ``<R>r-<RATE>``. ``--record NAME`` writes the figures
to ``benchmarks/results/NAME.json`` (rendered into the docs by ``benchmarks/render_docs.py``)::

    PYTHONPATH=platform:pipelines:api python benchmarks/time_model_check.py --ranks 4 \
        --dim 128 --samples 8192 --repeat 3 --ranks-per-host 2 --inside-link 1gbit \
        --link 100mbit --link 300mbit --record time_model_check_shaped --out /tmp/tmc-shaped
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import yaml

SCHEDULERS = ["naive", "herald", "het", "fae", "bagpipe"]


def spec_for(ranks: int, samples: int, profile: Path | None, dim: int = 16,
             links: dict | None = None) -> dict:  # fmt: skip
    """The training checked: small DLRM, 256 samples per worker, cache 20% of rows; on the
    shaped ``links`` (a ``train.distributed.links`` section) if given."""
    spec = {
        "name": f"time-model-check-{ranks}r",
        "mode": "train",
        "dataset": {"kind": "synthetic-criteo", "samples": samples, "seed": 1, "scale": 0.001},
        "cluster": {"workers": ranks, "batch_size": 256},
        "cache": {"ratio": 0.2},
        "embedding_dim": dim,
        "schedulers": [{"kind": k} for k in SCHEDULERS],
        "train": {"model": "small", "backend": "distributed"},
    }
    if profile is not None:
        spec["time_profile"] = str(profile)
    if links is not None:
        spec["train"]["distributed"] = {"links": links}
    return spec


def check(ranks: int, samples: int, out: Path, dim: int = 16, repeat: int = 1,
          links: dict | None = None) -> dict:  # fmt: skip
    from heraldbench.platform.distributed.links import Links
    from heraldbench.platform.distributed.profiling import options_for, profile_cluster
    from heraldbench.platform.spec import parse_spec
    from heraldbench.platform.timeprofile import save_time_profile
    from heraldbench.platform.training import train_experiment

    bare = parse_spec(spec_for(ranks, samples, None, dim, links))
    tag = f"{ranks}r" + (f"-{links['rate']}" if links else "")
    began = time.perf_counter()
    shaped = Links.from_spec(bare.train.distributed.links)
    profile = save_time_profile(out / f"profile-{tag}.yaml",
                                profile_cluster(options_for(bare), ranks, links=shaped))  # fmt: skip
    profiled = time.perf_counter() - began
    document = spec_for(ranks, samples, profile, dim, links)
    (out / f"spec-{tag}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    results = []
    for r in range(repeat):
        results.append(train_experiment(parse_spec(document)).to_json())
        name = f"train-{tag}.json" if repeat == 1 else f"train-{tag}-{r}.json"
        (out / name).write_text(json.dumps(results[-1], indent=1, default=float))
    return median_check(results) | {"profile_seconds": profiled}


def median_check(results: list[dict]) -> dict:
    """The time check of each scheduler's median run over the repeats (a real run, not an
    average), with the spread of the measured iteration over the repeats."""
    from heraldbench.platform.timecheck import measured_iteration, time_check

    if len(results) == 1:
        return results[0]["time_check"]
    runs, spread = [], {}
    for i, first in enumerate(results[0]["runs"]):
        repeats = sorted((r["runs"][i] for r in results), key=measured_iteration)
        runs.append(repeats[len(repeats) // 2])
        low, high = measured_iteration(repeats[0]), measured_iteration(repeats[-1])
        spread[first.get("label") or first["scheduler"]] = [low, high]
    return time_check(runs) | {"repeats": len(results), "measured_spread_s": spread}


def table(title: str, tc: dict) -> str:
    from heraldbench.platform.timecheck import order_beyond, time_check_md

    strict = order_beyond(tc["rows"])
    verdict = "yes" if not strict else "no: " + ", ".join(" vs ".join(p) for p in strict)
    return (time_check_md(tc, title=title)
            + f"Order agrees where modelled speedups differ by ≥10% (no tie band): {verdict}\n")  # fmt: skip


def links_section(rate: str | None, ranks_per_host: int, inside: str | None) -> dict | None:
    """The spec's ``train.distributed.links`` for one link speed (None: loopback)."""
    if rate is None:
        return None
    section: dict = {"rate": rate}
    if ranks_per_host > 1:
        section |= {"ranks_per_host": ranks_per_host, "inside": {"rate": inside or "1gbit"}}
    return section


def record_rows(ranks: int, links: dict | None, tc: dict) -> list[dict]:
    """One row per scheduler for the record: the link, modelled and measured ms, ratio, speedups."""
    link = "loopback" if links is None else links["rate"] + (
        f" between hosts of {links['ranks_per_host']}, {links['inside']['rate']} inside"
        if "inside" in links else "")  # fmt: skip
    return [{"link": link, "ranks": ranks, "scheduler": r["label"],
             "modelled_ms": round(r["modelled_s"] * 1e3, 1),
             "measured_ms": round(r["measured_s"] * 1e3, 1), "ratio": round(r["ratio"], 2),
             "speedup_modelled": round(r["speedup_modelled"], 2),
             "speedup_measured": round(r["speedup_measured"], 2)} for r in tc["rows"]]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, action="append", help="rank counts (default 2, 4)")
    parser.add_argument("--samples", type=int, default=16384, help="synthetic samples")
    parser.add_argument("--dim", type=int, default=16, help="embedding dim")
    parser.add_argument("--repeat", type=int, default=1,
                        help="trainings per rank count; each scheduler's median run is checked")
    parser.add_argument("--out", type=Path, default=Path("time-model-check"))
    parser.add_argument("--link", action="append",
                        help="shaped link rate (root), e.g. 100mbit; repeat for several speeds")
    parser.add_argument("--ranks-per-host", type=int, default=1,
                        help="with --link: ranks per host (--link is then between hosts)")
    parser.add_argument("--inside-link", help="with --ranks-per-host: the rate inside a host")
    parser.add_argument("--record", help="write the figures to benchmarks/results/RECORD.json")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    checks, rows = {}, []
    for ranks in args.ranks or [2, 4]:
        for rate in args.link or [None]:
            links = links_section(rate, args.ranks_per_host, args.inside_link)
            title = f"{ranks} ranks" + (f", {rate} links" if rate else "")
            checks[title] = check(ranks, args.samples, args.out, args.dim, args.repeat, links)
            rows += record_rows(ranks, links, checks[title])
            print(table(title, checks[title]), flush=True)
            for label, (low, high) in checks[title].get("measured_spread_s", {}).items():
                print(f"- {label}: measured {low * 1e3:.2f}–{high * 1e3:.2f} ms over "
                      f"{args.repeat} trainings", flush=True)
    (args.out / "time_check.json").write_text(json.dumps(checks, indent=1))
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _records import write_record

        print(f"wrote {write_record(args.record, {'rows': rows})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
