#!/usr/bin/env python3
"""How much does the NIC speed matter to a job? A sweep from Python, as one would do it in a notebook.

    make python && python3 examples/notebook.py [SCENARIO] [--plot nic-sweep.png | --no-plot]

Sweeps cluster.nic_gbps over a scenario (default examples/gpt3-13b-128-a100.yaml), turns the rows into a pandas
DataFrame when pandas is installed (else keeps the list of dicts), prints the table, and, when matplotlib is
installed, draws iteration time and exposed communication against the NIC speed into nic-sweep.png (--plot). Without
pandas or matplotlib it prints the same table by hand and draws nothing. See docs/python.md.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "build", "python"))  # the module in the build tree (`make python`)

import trainsim  # noqa: E402

COLUMNS = ["cluster.nic_gbps", "status", "iteration_time_s", "tokens_per_s_per_gpu", "mfu", "breakdown.exposed_comm"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default=os.path.join(HERE, "gpt3-13b-128-a100.yaml"))
    parser.add_argument("--nic-gbps", default=[50, 100, 200, 400, 800], type=int, nargs="+",
                        help="the NIC speeds to simulate (default 50 100 200 400 800)")
    parser.add_argument("--plot", default="nic-sweep.png", help="the image to draw (default nic-sweep.png)")
    parser.add_argument("--no-plot", action="store_true", help="print the table only")
    args = parser.parse_args()

    # One dict per point: the varied key, status and reason, every scalar result field by its dotted name.
    rows = trainsim.sweep(args.scenario, vary={"cluster.nic_gbps": args.nic_gbps})

    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        frame = pd.DataFrame(rows)
        print(frame[COLUMNS].to_string(index=False))
    else:
        print("  ".join(f"{c:>22}" for c in COLUMNS))
        for r in rows:
            cells = [r[c] if not isinstance(r[c], float) else f"{r[c]:.6g}" for c in COLUMNS]
            print("  ".join(f"{str(c):>22}" for c in cells))

    if not args.no_plot:
        try:
            import matplotlib
            matplotlib.use("Agg")  # a file, no display needed
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot, the table above has the numbers", file=sys.stderr)
            return 0
        ok = [r for r in rows if r["status"] == "ok"]
        x = [r["cluster.nic_gbps"] for r in ok]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(x, [r["iteration_time_s"] for r in ok], marker="o", label="iteration")
        ax.plot(x, [r["breakdown.exposed_comm"] for r in ok], marker="s", label="exposed communication")
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, [str(v) for v in x])
        ax.set_xlabel("NIC speed (Gb/s)")
        ax.set_ylabel("seconds")
        ax.set_title(os.path.basename(args.scenario))
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
