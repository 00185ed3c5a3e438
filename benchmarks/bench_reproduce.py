"""The quick profile's run time per notebook and section (``make bench``): runs ``dpkernels reproduce --profile quick``
(outputs in build/quick/, nothing tracked changes) and keeps its timing table as benchmarks/results/timings_quick.csv.
The full profile's table, benchmarks/results/timings_full.csv, is copied from a full run by ``make update-reference``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from dpkernels.runner import reproduce
from dpkernels.workbook import find_root

if __name__ == "__main__":
    code = reproduce(profile="quick", jobs=1, progress=False)
    if code:
        sys.exit(code)
    shutil.copy(find_root() / "build" / "quick" / "benchmarks" / "results" / "timings_quick.csv",
                Path(__file__).parent / "results" / "timings_quick.csv")
