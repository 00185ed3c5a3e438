"""The published numbers: Yu et al. (2020), Table 2.

"Algorithm validation accuracy (in %) on various kinds of real world datasets.  Privacy parameter epsilon is 0.1 for
binary dataset": test accuracy (the held-out 20%) of logistic regression, the mean of 20 runs at the grid point whose
mean is largest (tuned on the test rows, not privately), delta = 1 / n^2.  The same numbers are in the ICLR 2020
submission of the paper (Table 2) and the IJCAI 2020 version.  AMP (Iyengar et al. 2019) and output-perturbed SGD
(Wu et al. 2017) were run with Iyengar et al.'s implementation and grids; the non-private row is a logistic regression
on the same split (Iyengar et al.'s baseline is scikit-learn's, on the unclipped features).
"""

from __future__ import annotations

__all__ = ["PUBLISHED_TABLE_2", "PUBLISHED_N_RUNS", "PUBLISHED_EPSILON", "TABLE_2_SOURCE", "DATASETS"]

DATASETS = ("adult", "kddcup99")
#: (data set, method) -> published accuracy in %.
PUBLISHED_TABLE_2: dict[tuple[str, str], float] = {
    ("kddcup99", "non-private"): 99.1, ("adult", "non-private"): 84.8,
    ("kddcup99", "AMP"): 97.5, ("adult", "AMP"): 79.3,
    ("kddcup99", "Out-SGD"): 98.1, ("adult", "Out-SGD"): 77.4,
    ("kddcup99", "DP-SGD"): 98.7, ("adult", "DP-SGD"): 80.4,
    ("kddcup99", "DP-GD"): 98.7, ("adult", "DP-GD"): 80.9,
}
PUBLISHED_N_RUNS = 20
PUBLISHED_EPSILON = 0.1
TABLE_2_SOURCE = "Yu et al. (2020), Table 2 (arXiv 1911.11363; IJCAI 2020), epsilon = 0.1, delta = 1/n^2, mean of 20 runs"
