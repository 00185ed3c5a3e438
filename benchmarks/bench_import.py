"""Import time of the public API, each statement in a fresh interpreter (issue 19: ``import dpkernels`` well under
a second).

Times are measured inside the child interpreter around the statement alone (interpreter start-up excluded); the
median and the minimum of ``REPEATS`` runs are reported.  ``import sklearn.base`` is the floor of every estimator
import: scikit-learn loads scipy.stats and pandas itself (``sklearn.utils.fixes``).

Run on a quiet machine: ``python benchmarks/bench_import.py``; writes ``benchmarks/results/import.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPEATS = 7
STATEMENTS = {
    "import dpkernels": "import dpkernels",
    "warnings": "from dpkernels import PrivacyLeakWarning, ClippingWarning, UnsafeNoiseWarning",
    "one estimator": "from dpkernels import PrivateSVM",
    "every estimator": "from dpkernels import PrivateSVM, PrivateSVMFinite, OutputPerturbation, ObjectivePerturbation, "
                       "PrivateKernelERM, PrivateTuning, PrivateKDE, PrivateKernelMachine, PrivateMarginClassifier, "
                       "PrivateKernelMarginClassifier, ExponentialMarginClassifier, PrivateMarginSelection, PrivateSVDD, "
                       "EquilibriumPointClassifier",
    "scikit-learn floor (import sklearn.base)": "import sklearn.base",
}


def time_statement(statement: str) -> float:
    code = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    out: dict[str, object] = {"load_average_before": list(os.getloadavg()), "cpus": os.cpu_count(),
                              "python": sys.version.split()[0], "repeats": REPEATS,
                              "dpkernels": str(Path(__import__("dpkernels").__file__).parent)}
    rows = []
    for label, statement in STATEMENTS.items():
        times = [time_statement(statement) for _ in range(REPEATS)]
        rows.append({"what": label, "statement": statement, "median_s": statistics.median(times), "min_s": min(times)})
        print(f"{label:<42} median {rows[-1]['median_s']:.3f} s   min {rows[-1]['min_s']:.3f} s", flush=True)
    out["imports"] = rows
    out["load_average_after"] = list(os.getloadavg())
    path = Path(__file__).parent / "results" / "import.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"load average {out['load_average_before']} -> {out['load_average_after']}; wrote {path}")


if __name__ == "__main__":
    main()
