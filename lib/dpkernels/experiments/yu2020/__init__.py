"""Yu, Zhang, Chen, Yin and Liu (2020), *Gradient perturbation is underrated for differentially private convex
optimization* (IJCAI 2020, arXiv 1911.11363), Table 2, reproduced with the library's gradient estimators on Iyengar et
al. (2019)'s Adult and KDDCup99; run by ``notebooks/yu2020.py``.

Rooms by role:

* :mod:`~dpkernels.experiments.yu2020.protocol`: Iyengar et al.'s preparation, Yu et al.'s grids and runs;
* :mod:`~dpkernels.experiments.yu2020.readings`: the published numbers;
* :mod:`~dpkernels.experiments.yu2020.registry`: the hypotheses about the published numbers, registered before they are run (``registry.yaml``);
* :mod:`~dpkernels.experiments.yu2020.hypotheses`: what each hypothesis changes in the protocol, and the joint test that decides it;
* :mod:`~dpkernels.experiments.yu2020.variants`: the runs of the hypotheses' variants, as a command of their own (``registered_runs.csv``);
* :mod:`~dpkernels.experiments.yu2020.audits`: privacy audits of the four estimators with negative controls;
* :mod:`~dpkernels.experiments.yu2020.records`: the comparison table (``source`` column) and its classes.
* :mod:`~dpkernels.experiments.yu2020.fair`: the frontier's fair protocol (public rules, private selection) at Yu et al.'s
  setting, beside the published numbers.
"""

from __future__ import annotations

from .protocol import (
    ALPHA,
    CLIP_NORM,
    EPSILON,
    GRIDS,
    KDD_ROWS,
    METHODS,
    N_RUNS,
    PAPER,
    SAMPLING_RATE,
    SPLIT_SEED,
    TRAIN_FRACTION,
    Split,
    best_points,
    delta_for,
    grid_points,
    iyengar_adult,
    iyengar_kddcup99,
    load_split,
    nonprivate_accuracy,
    protocol_configs,
    run_grid,
    run_point,
    run_protocol,
    run_task,
)
