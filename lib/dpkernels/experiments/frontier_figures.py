"""Figures of the frontier notebook: error against training size, the recommendation map and the cost curves."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpkernels.experiments.frontier import MECHANISMS, TRACED_EPSILON

if TYPE_CHECKING:  # plotting is an extra (dpkernels[plot]): imported inside the functions
    import matplotlib.pyplot as plt

__all__ = ["SHORT", "short", "palette", "plot_frontier", "plot_map", "plot_costs", "plot_ablation"]

#: Short names for the map's cells (a selected row: its base's short name with "-sel").
SHORT = {
    "rubinstein-finite": "Rub-lin", "rubinstein-rff": "Rub-RFF", "chaudhuri-output-logistic": "out-LR",
    "chaudhuri-output-huber": "out-Hub", "chaudhuri-objective-logistic": "obj-LR", "chaudhuri-objective-huber": "obj-Hub",
    "chaudhuri-kernel": "obj-RFF", "hall-nystrom": "Hall", "bassily-alg2": "Bas-2", "bassily-alg3": "Bas-3",
    "park-epc": "Park", "park-table-7.1": "Park-T7.1", "diffprivlib-lr": "dpl-LR", "noisy-gd": "DP-GD",
    "dp-sgd": "DP-SGD", "amp": "AMP", "output-sgd": "out-SGD",
    "nonprivate-logistic": "LR", "nonprivate-linearsvc": "LinSVC", "nonprivate-svc": "SVC",
}


def short(name: str) -> str:
    """The short name of a frontier row (falls back to the name itself)."""
    if name.endswith("-selected") and name[:-len("-selected")] in SHORT:
        return SHORT[name[:-len("-selected")]] + "-sel"
    return SHORT.get(name, name)


#: The smallest RGB distance between a selected variant's colour (or Park's tuned row's) and its rule's.
PARTNER_GAP = 0.35

#: The order in which rows pick their colours: the rules' rows (the contenders of every frontier figure) first.
_COLOUR_ORDER = ("rule", "paper", "reference", "selected")


def palette() -> dict[str, tuple[float, float, float]]:
    """One colour per mechanism, the same in every figure, as far apart as a greedy choice gets them: the candidates
    are husl's 36 evenly spaced hues at four lightnesses; the rows, the rules' rows first (:data:`_COLOUR_ORDER`, then
    the registry's order), each take the candidate farthest (in RGB) from every colour taken before it
    (farthest-point sampling), a selected variant among those at least :data:`PARTNER_GAP` from its rule's.  One hue
    per row in registry order put neighbours there (a rule's row and its privately selected variant, a paper's rows)
    on near-identical hues; a stride through the hues moved the
    collisions to other pairs (dp-sgd and objective perturbation (Huber) 0.19 apart, park-epc and noisy-gd 0.09)."""
    import seaborn as sns

    names = sorted(MECHANISMS, key=lambda m: (_COLOUR_ORDER.index(MECHANISMS[m].protocol), list(MECHANISMS).index(m)))
    cands = np.array([c for light in (0.3, 0.45, 0.6, 0.75) for c in sns.husl_palette(36, l=light, s=0.9)])
    partner = {m: MECHANISMS[m].base or ("park-epc" if m == "park-table-7.1" else "") for m in names}
    taken: dict[str, int] = {}
    far = np.full(len(cands), np.inf)
    for m in names:
        score = far.copy()
        if partner[m] in taken:  # a selected variant (or Park's tuned row) keeps away from its own rule's colour
            score[np.linalg.norm(cands - cands[taken[partner[m]]], axis=1) < PARTNER_GAP] = -1.0
        taken[m] = int(score.argmax())
        far = np.minimum(far, np.linalg.norm(cands - cands[taken[m]], axis=1))
    return {m: tuple(float(x) for x in cands[i]) for m, i in taken.items()}


def plot_frontier(df: pd.DataFrame, dataset: str, protocols: tuple[str, ...] = ("rule", "paper")) -> "plt.Figure":
    """Mean test error (+- 1.96 standard errors over seeds) against training size, one panel per epsilon, for the private rows
    of the given protocols; dashed: the non-private references; dotted: the majority class."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    g = df[(df["dataset"] == dataset) & (df["mechanism"].map(lambda m: MECHANISMS[m].protocol).isin(
        (*protocols, "reference")))]
    eps = sorted(g.loc[g["privacy"] != "none", "epsilon"].unique())
    fig, axes = plt.subplots(1, len(eps), figsize=(4.2 * len(eps), 4.4), sharey=True, squeeze=False)
    pal = palette()
    refs = g[g["privacy"] == "none"]
    for ax, e in zip(axes[0], eps):
        priv = g[(g["privacy"] != "none") & (g["epsilon"] == e)]
        sns.lineplot(data=priv, x="n_train", y="error", hue="mechanism", palette=pal, marker="o", errorbar=("se", 1.96),
                     err_style="bars", ax=ax, legend=ax is axes[0][-1])
        for m, r in refs.groupby("mechanism"):
            mean = r.groupby("n_train")["error"].mean()
            ax.plot(mean.index, mean.values, ls="--", lw=1.2, color=pal[m], label=MECHANISMS[m].label)
        base = g.groupby("n_train")["base_error"].mean()
        ax.plot(base.index, base.values, ls=":", lw=1.8, color="k", label="majority class (test set)")
        ax.set(xscale="log", title=f"epsilon = {e:g}", xlabel="training rows n (log scale)",
               ylabel="test error (fraction misclassified)")
    handles, labels = axes[0][-1].get_legend_handles_labels()
    if axes[0][-1].get_legend() is not None:
        axes[0][-1].get_legend().remove()
    labels = [MECHANISMS[lab].label if lab in MECHANISMS else lab for lab in labels]
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8)
    fig.suptitle(f"{dataset}: test error against training size at equal total privacy cost "
                 f"({' and '.join(protocols)} rows)")
    fig.tight_layout()
    return fig


def plot_map(rec: pd.DataFrame, dataset: str, ax: "plt.Axes") -> None:
    """The recommendation map of one data set: training size (rows) against epsilon (columns), each cell coloured by
    its winner (the lowest mean error among the mechanisms within budget that beat the majority class), annotated with
    its error and the number of mechanisms equivalent to it; grey and unnamed where no private mechanism beats the
    majority class (nothing learns there)."""
    from matplotlib.patches import Patch, Rectangle

    r = rec[rec["dataset"] == dataset]
    ns = sorted(r["n_train"].unique())
    es = sorted(r["epsilon"].unique())
    pal = palette()
    used = []
    for i, n in enumerate(ns):
        for j, e in enumerate(es):
            cell = r[(r["n_train"] == n) & (r["epsilon"] == e)]
            if cell.empty:
                continue
            c = cell.iloc[0]
            if not c["any_beats_majority"]:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="0.85", edgecolor="white", lw=2))
                ax.text(j + 0.5, i + 0.5, "nothing\nlearns", ha="center", va="center", fontsize=8, color="0.35")
                continue
            used.append(c["best"])
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=pal[c["best"]], edgecolor="white", lw=2))
            k = len([m for m in str(c["equivalent"]).split(";") if m])
            ax.text(j + 0.5, i + 0.5, f"{short(c['best'])}\n{c['error']:.3f}" + (f"\n+{k} equiv." if k else ""),
                    ha="center", va="center", fontsize=8)
    ax.set(xlim=(0, len(es)), ylim=(0, len(ns)), xticks=np.arange(len(es)) + 0.5, yticks=np.arange(len(ns)) + 0.5,
           xlabel="total epsilon", ylabel="training rows n")
    ax.set_xticklabels([f"{e:g}" for e in es])
    ax.set_yticklabels([f"{n:,}" for n in ns])
    ax.set_title(dataset)
    handles = [Patch(facecolor=pal[m], label=MECHANISMS[m].label) for m in dict.fromkeys(used)]
    handles.append(Patch(facecolor="0.85", label="no private mechanism beats the majority class"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)


def plot_ablation(runs: pd.DataFrame, dataset: str) -> "plt.Figure":
    """Mean test error of each rule row at its constant times 0.1, 1 and 10 (x axis, log), one panel per (n, epsilon)
    cell of the ablation grid."""
    import matplotlib.pyplot as plt

    g = runs[(runs["dataset"] == dataset) & runs["error"].notna()]
    cells = sorted({(int(n), float(e)) for n, e in zip(g["n_train"], g["epsilon"])})
    fig, axes = plt.subplots(1, len(cells), figsize=(3.6 * len(cells), 3.8), sharey=True, squeeze=False)
    pal = palette()
    for ax, (n, e) in zip(axes[0], cells):
        c = g[(g["n_train"] == n) & (g["epsilon"] == e)]
        for m, r in c.groupby("mechanism"):
            mean = r.groupby("scale")["error"].mean()
            ax.plot(mean.index, mean.values, marker="o", ms=3, color=pal[m], label=MECHANISMS[m].label)
        base = c["base_error"].mean()
        ax.axhline(base, ls=":", color="k", lw=1.5, label="majority class (test set)")
        ax.set(xscale="log", title=f"n = {n:,}, epsilon = {e:g}", xlabel="rule constant x (log scale)",
               ylabel="mean test error")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8)
    fig.suptitle(f"{dataset}: the rules' constants scaled by 0.1, 1 and 10")
    fig.tight_layout()
    return fig


def plot_costs(curves: pd.DataFrame) -> "plt.Figure":
    """Median fit seconds and peak traced memory (the traced epsilon's runs: ``cost_curves``' ``peak_mb``) against
    training size (log-log), one column per data set."""
    import matplotlib.pyplot as plt

    datasets = sorted(curves["dataset"].unique())
    fig, axes = plt.subplots(2, len(datasets), figsize=(4.2 * len(datasets), 8), squeeze=False)
    pal = palette()
    for j, ds in enumerate(datasets):
        c = curves[curves["dataset"] == ds]
        memory = f"peak traced memory at epsilon = {TRACED_EPSILON:g} (MB)"
        for i, (col, lab) in enumerate((("fit_seconds", "median fit time (s)"), ("peak_mb", memory))):
            ax = axes[i][j]
            for m, g in c.groupby("mechanism"):
                ax.plot(g["n_train"], np.maximum(g[col], 1e-4), marker="o", ms=3, color=pal[m],
                        ls="--" if m == "diffprivlib-lr" else "-", lw=2.2 if m == "diffprivlib-lr" else 1.2,
                        label=MECHANISMS[m].label)
            if col == "peak_mb":
                t = c.groupby("n_train")["train_mb"].first()
                ax.plot(t.index, 3 * t.values, color="k", ls=":", label="3 x the training matrix")
            ax.set(xscale="log", yscale="log", xlabel="training rows n (log scale)", ylabel=lab, title=ds)
    handles, labels = axes[0][0].get_legend_handles_labels()
    h2, l2 = axes[1][0].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    seen.update({k: v for k, v in zip(l2, h2) if k not in seen})
    fig.legend(list(seen.values()), list(seen.keys()), loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8)
    fig.tight_layout()
    return fig
