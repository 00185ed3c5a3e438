"""Issue 26.6: every sentence about privacy in the README, the docstrings and ERRATA, checked against the code.

:data:`CLAIMS` lists each statement kept (its source and a fragment that must stay in it) with the tests that check
it.  The tests here make sure that

* every bullet of the README template's privacy section, and of its "Using the mechanisms" statements about privacy,
  has claims registered, and every registered fragment is still in its source (an edit of the prose must revisit the
  registry);
* every check a claim names exists;
* the claims no other test covers are checked here, by measurement where the sentence says why: recomputing a seeded
  fit with its seed tells neighbours apart (and a secret key's fit is not found by trying seeds); objective
  perturbation's delta is the stated tail of its noise; the numbers the
  prose quotes (status values, grid fractions, the UtilityWarning's threshold and its calibration) are the code's.
"""

from __future__ import annotations

import importlib
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpkernels.report import REPO_ROOT

README = REPO_ROOT / "docs" / "README.md"
ERRATA = REPO_ROOT / "docs" / "ERRATA.md"
LIB = REPO_ROOT / "lib" / "dpkernels"

#: (source, fragment, checks): a statement about privacy and the tests that check it ("file::test" or "here::test").
CLAIMS: list[tuple[Path, str, tuple[str, ...]]] = [
    # README: Privacy
    (README, "What you publish is `model.release()`.", (
        "test_release_hygiene::test_release_export_holds_no_training_row_no_unnoised_statistic_no_seed",
        "test_release_hygiene::test_fitted_object_holds_only_its_release")),
    (README, "no fitted object\n  (sub-estimators included) creates and keeps a numpy `Generator`", (
        "test_release_hygiene::test_no_generator_or_seed_sequence_anywhere_in_a_fitted_object",
        "test_release_hygiene::test_random_objects_walk_finds_a_generator_kept_anywhere")),
    (README, "one you pass as `random_state` stays in the parameters, as in scikit-learn, and makes the fit a "
             "reproduction", ("test_release_hygiene::test_every_guarantee_states_what_the_object_is",)),
    (README, "`guarantee_.status` says what the object is.", (
        "here::test_the_status_values_are_the_code_s", "test_release_hygiene::test_every_guarantee_states_what_the_object_is",
        "test_accounting::test_only_releases_are_booked_and_the_refusal_names_the_fix")),
    (README, "every sub-estimator of a wrapper", ("test_release_hygiene::test_every_guarantee_states_what_the_object_is",)),
    (README, "A seed is reproduction, not privacy.", (
        "here::test_a_seed_lets_whoever_knows_it_tell_neighbours_apart",
        "test_release_hygiene::test_every_guarantee_states_what_the_object_is")),
    (README, "pass `random_state=dpkernels.SecretKey()`", (
        "here::test_a_seed_lets_whoever_knows_it_tell_neighbours_apart", "here::test_secret_keys",
        "test_release_hygiene::test_every_guarantee_states_what_the_object_is")),
    (README, "reruns, clones, pickles and `GridSearchCV(n_jobs=2)`\n  reproduce it", (
        "test_release_hygiene::test_seeded_noise_depends_on_seed_parameters_and_data",
        "test_release_hygiene::test_seeded_model_selection_reproduces_under_scikit_learn_parallelism",
        "test_release_hygiene::test_noise_generator_reproduces_and_separates")),
    (README, "`guarantee_` states the level that holds and what it assumes.", (
        "test_chaudhuri::test_output_perturbation_noise_law", "test_fp_attacks::test_release_delta_is_stated_and_small",
        "test_noise::test_guarantees_state_the_numerical_assumptions_of_their_proofs",
        "test_accounting::test_floating_point_deltas_need_an_explicit_allowance")),
    (README, "Floating-point safe by default.", (
        "here::test_the_grids_are_the_ones_the_prose_states", "test_rubinstein::test_floating_point_attack",
        "test_fp_attacks::test_argmin_attack_on_objective_perturbation")),
    (README, "Timing is not covered.", (
        "here::test_the_lattice_timing_the_prose_quotes_is_the_benchmark_s",
        "test_lattice::test_refinement_gives_the_same_cell_as_the_fast_path")),
    (README, "delta is e^epsilon times the probability that the noise exceeds a public\n  quantile far in its tail", (
        "here::test_the_objective_release_states_what_the_prose_says",
        "test_argmin_release::test_stated_delta_meets_issue_27_over_its_grid")),
    (README, "`noise=\"idealized\"` (\"idealized numerics\"", (
        "test_noise::test_idealized_noise_is_an_explicit_opt_in_whose_guarantee_says_so",)),
    (README, "A typo in `noise` raises, in every estimator and every exported noise helper.", (
        "test_release_hygiene::test_every_noise_option_is_validated_and_continuous_warns",
        "test_noise::test_every_exported_noise_helper_validates_its_option")),
    (README, "delta far below 1/n.", (
        "test_hall::test_delta_not_far_below_one_over_n_is_refused",
        "test_hall::test_a_stated_delta_not_far_below_one_over_n_is_no_release",
        "test_gradient::test_common_behaviour",
        "test_multiclass::test_approximate_budget_through_dp_accounting",
        "test_argmin_release::test_delta_at_or_above_one_over_n_is_refused_with_public_text_only",
        "test_recommendation::test_delta_must_be_far_below_one_over_n",
        "test_park::test_the_baselines_read_nothing_from_the_data_and_refuse_a_delta_of_one_over_n")),
    (README, "Logs carry no statistic of the private rows.", (
        "test_data_independent_logs::test_neighbours_log_the_same_text",
        "test_data_independent_logs::test_malformed_inputs_are_refused_without_their_values",
        "test_data_independent_logs::test_public_bounds_scaler_logs_nothing_about_the_rows",
        "test_data_independent_logs::test_label_errors_quote_labels_only_inside_diagnostics",
        "test_data_independent_logs::test_diagnostics_show_the_statistics_explicitly",
        "test_data_independent_logs::test_scikit_learn_messages_would_quote_the_rows")),
    (README, "Bounds, label sets and data preparation are public by construction.", (
        "test_fp_attacks::test_default_constructors_release_no_data_derived_bound_or_label_set",
        "test_rubinstein::test_bounds_are_public_by_construction",
        "test_datasets::test_adult_default_map_reads_no_private_maximum")),
    (README, "Everything fitted on private data spends privacy, and the accountant books releases only.", (
        "test_accounting::test_only_releases_are_booked_and_the_refusal_names_the_fix",
        "test_accounting::test_pipelines_are_unwrapped_to_their_private_steps",
        "test_accounting::test_a_search_costs_every_candidate_and_fold_and_its_selection_is_unaccounted",
        "test_accounting::test_a_guarantee_depends_on_public_quantities_only",
        "test_accounting::test_floating_point_deltas_need_an_explicit_allowance")),
    (README, "Certified solvers.", (
        "test_chaudhuri::test_uncertified_solve_is_refused", "test_rubinstein::test_uncertified_solve_is_refused")),
    # README: Using the mechanisms
    (README, "release = model[-1].release()  # what you publish", (
        "test_utility_warning::test_the_readme_example_raises_none_and_a_noise_dominated_fit_does",
        "here::test_the_readme_example_publishes_a_release")),
    (README, "For an experiment you rerun, add `random_state=0`: the fit is then a reproduction", (
        "test_release_hygiene::test_every_guarantee_states_what_the_object_is",)),
    (README, "exceeds 8, a `UtilityWarning` says the release is likely mostly noise", (
        "test_utility_warning::test_threshold_is_the_committed_calibration",
        "test_utility_warning::test_committed_ratios_recompute_from_public_parameters",
        "test_utility_warning::test_one_warning_per_wrapper", "here::test_the_utility_numbers_the_prose_quotes")),
    (README, "Every estimator accepts scipy sparse input and densifies it.", (
        "test_data_independent_logs::test_one_sparse_input_rule_accept_and_densify",)),
    # ERRATA
    (ERRATA, "available as the explicit opt-in `noise=\"idealized\"` (former name `\"continuous\"`)", (
        "test_noise::test_idealized_noise_is_an_explicit_opt_in_whose_guarantee_says_so",
        "test_rubinstein::test_floating_point_attack")),
    (ERRATA, "`noise=\"idealized\"` (former name `\"continuous\"`) keeps the\n  thesis's sampler", (
        "test_noise::test_idealized_noise_is_an_explicit_opt_in_whose_guarantee_says_so",)),
    # docstrings
    (LIB / "mechanisms" / "base.py", "An int seed, a ``SeedSequence`` or a ``Generator`` makes the fit a reproduction", (
        "test_release_hygiene::test_every_guarantee_states_what_the_object_is",)),
    (LIB / "mechanisms" / "base.py", "Whether this object is a release: True exactly when ``status == \"release\"``", (
        "here::test_the_status_values_are_the_code_s",)),
    (LIB / "mechanisms" / "base.py", "an export of a seeded fit stays a\n            \"reproduction\"", (
        "test_release_hygiene::test_every_guarantee_states_what_the_object_is",)),
    (LIB / "_validation.py", "by default none\ncarries a count, a value or a norm computed from the private rows", (
        "test_data_independent_logs::test_neighbours_log_the_same_text",)),
    (LIB / "_validation.py", "unlike an int seed", ("here::test_secret_keys",)),
    (LIB / "accounting.py", "Only releases (``guarantee_.status == \"release\"``)", (
        "test_accounting::test_only_releases_are_booked_and_the_refusal_names_the_fix",)),
    (LIB / "datasets.py", "NOT a public map: each numeric column is divided by its largest absolute value", (
        "test_datasets::test_adult_default_map_reads_no_private_maximum",)),
    (LIB / "preprocessing.py", "Clipping is silent", (
        "test_preprocessing::test_values_outside_the_public_bounds_are_clipped_silently_unless_diagnostics",)),
]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _section(title: str) -> str:
    text = README.read_text()
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_every_privacy_bullet_of_the_readme_is_registered():
    bullets = re.findall(r"^- \*\*(.+?)\*\*", _section("Privacy: what a fitted model is, and what it is not"), re.M)
    assert len(bullets) >= 9
    registered = _flat(" ".join(f for src, f, _ in CLAIMS if src == README))
    missing = [b for b in bullets if _flat(b) not in registered]
    assert not missing, f"README privacy bullets without a registered claim: {missing}"


@pytest.mark.parametrize("source,fragment,checks", CLAIMS, ids=[f"{s.name}:{f[:40]}" for s, f, _ in CLAIMS])
def test_every_registered_claim_is_in_its_source_and_its_checks_exist(source, fragment, checks):
    assert _flat(fragment) in _flat(source.read_text()), f"{source.name} no longer says: {fragment!r}"
    for check in checks:
        module, name = check.split("::")
        mod = importlib.import_module(__name__ if module == "here" else module)
        assert callable(getattr(mod, name, None)), f"{check} does not exist"


# ----------------------------------------------------------------------------------------------
# claims checked here
# ----------------------------------------------------------------------------------------------
def test_the_status_values_are_the_code_s():
    from dpkernels import Guarantee
    from dpkernels.mechanisms.base import STATUSES

    quoted = re.findall(r'`"([a-z ]+)"`', _section("Privacy: what a fitted model is, and what it is not").split(
        "says what the object is.", 1)[1].split("Whatever the status", 1)[0])
    assert quoted == list(STATUSES)
    for status in STATUSES:
        g = Guarantee(1.0, 0.0, "replace-one", "x", "y", status=status)
        assert g.private == (status == "release")


def _neighbours(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    X2 = X.copy()
    X2[0] = rng.uniform(-0.5, 0.5, size=3)
    return X, X2, y


def test_a_seed_lets_whoever_knows_it_tell_neighbours_apart():
    """The measurement behind "a seed is reproduction": an attacker who knows the seed (or tries the ints 0..99) refits
    on D and on D' and compares with the published release: D is identified in every trial and D' never.  With a
    SecretKey the same search finds nothing (the release is not a function of any int seed it can try)."""
    from dpkernels import OutputPerturbation, SecretKey

    trials, found_d, found_d2, keyed = 10, 0, 0, 0
    for t in range(trials):
        X, X2, y = _neighbours(t)
        secret_seed = int(np.random.default_rng(100 + t).integers(0, 100))
        published = OutputPerturbation(random_state=secret_seed).fit(X, y).release()
        guess = {s: OutputPerturbation(random_state=s) for s in range(100)}
        found_d += any(np.array_equal(m.fit(X, y).coef_, published.coef_) for m in guess.values())
        found_d2 += any(np.array_equal(m.fit(X2, y).coef_, published.coef_) for m in guess.values())
        key_release = OutputPerturbation(random_state=SecretKey()).fit(X, y).release()
        keyed += any(np.array_equal(m.fit(X, y).coef_, key_release.coef_) for m in guess.values())
    assert (found_d, found_d2, keyed) == (trials, 0, 0)
    assert published.guarantee_.status == "reproduction" and key_release.guarantee_.status == "release"


def test_secret_keys():
    from dpkernels import OutputPerturbation, SecretKey
    from dpkernels._validation import check_random_state

    assert SecretKey.MIN_BITS == 128
    with pytest.raises(ValueError, match="at least 128 bits"):
        SecretKey(64)
    key = SecretKey()
    assert key._entropy.bit_length() == 256 and str(key._entropy) not in repr(OutputPerturbation(random_state=key))
    X, _, y = _neighbours(0)
    a, b = OutputPerturbation(random_state=key).fit(X, y), OutputPerturbation(random_state=key).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)  # reproducible for the key's holder
    assert not np.array_equal(a.coef_, OutputPerturbation(random_state=SecretKey()).fit(X, y).coef_)
    with pytest.raises(ValueError, match="SecretKey"):
        check_random_state(key)  # a function entry point would reuse its stream


def test_the_grids_are_the_ones_the_prose_states():
    from dpkernels import lattice

    assert lattice.GRID_BITS == 16  # 2^-16 of the noise's scale


def test_the_objective_release_states_what_the_prose_says():
    """The README's objective-perturbation sentence: a small share of the noise budget pays for the certified float
    error (the noise is drawn at beta (1 - FP_SHARE), FP_SHARE at most MAX_FP_SHARE), the stated epsilon is the one
    asked for, and delta = e^epsilon x the probability of the noise beyond its public quantile (at most 2 x 2^-100)."""
    from dpkernels import ObjectivePerturbation
    from dpkernels import argmin_release as A
    from dpkernels.losses import make_loss

    assert A.TAIL == 2.0**-100 and A.FP_SHARE <= A.MAX_FP_SHARE <= 0.5
    params, plan = A.objective_perturbation_plan(1.0, 40_000, 101, make_loss("logistic"), 1e-4)
    # the refusal's probability: twice the Gamma tail at the quantile, less the enclosure's slack
    assert A.TAIL <= plan.tail <= 2.01 * A.TAIL
    assert plan.beta_release < plan.beta <= plan.beta_release / (1 - A.MAX_FP_SHARE)
    assert plan.delta(1.0) == pytest.approx(math.e * plan.tail / (1 - plan.tail), rel=1e-12)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    g = ObjectivePerturbation(epsilon=1.0, alpha=1e-2).fit(X, np.where(X[:, 0] > 0, 1, -1)).guarantee_
    assert g.epsilon == 1.0 and 0 < g.delta <= math.e * 2.01 * A.TAIL and g.fp_delta == g.delta


def test_the_readme_example_publishes_a_release():
    from test_install import readme_example

    code = readme_example() if (REPO_ROOT / "README.md").read_text().count("model[-1].release()") else None
    template = re.search(r"```python\n(.*?)```", _section("Using the mechanisms"), re.S).group(1)
    (call,) = re.findall(r"ObjectivePerturbation\(.*?\)", template)
    assert "random_state" not in call and "model[-1].release()" in template
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", Warning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        exec(compile(template, "README example", "exec"), namespace)  # noqa: S102 - the documented example
    assert namespace["release"].guarantee_.status == "release"
    assert code is None or code == template  # the rendered README carries the same example once rendered


def test_the_utility_numbers_the_prose_quotes():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    from dpkernels import ObjectivePerturbation, PublicBoundsScaler
    from dpkernels._validation import UTILITY_RATIO_THRESHOLD
    from dpkernels.datasets import breast_cancer_ranges
    from dpkernels.experiments.utility_calibration import RATIO_MECHANISMS, committed_table

    text = _flat(_section("Using the mechanisms"))
    assert f"exceeds {UTILITY_RATIO_THRESHOLD:g}, a `UtilityWarning`" in text
    table = committed_table()
    assert f"({len(table)} configurations of the" in text
    assert f"beat the majority class, {table[table.beats_majority == 'holds'].ratio.max():.2f}, rounded up" in text
    assert f"the {['one', 'two', 'three', 'four', 'five', 'six', 'seven'][len(RATIO_MECHANISMS) - 1]} mechanisms" in text
    X, y = load_breast_cancer(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, random_state=0)
    m = make_pipeline(PublicBoundsScaler(*breast_cancer_ranges()), ObjectivePerturbation(epsilon=1.0, classes=[0, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(X, y)
    assert f"(ratio about {m[-1].noise_to_solution_:.1f})" in text


def test_the_lattice_timing_the_prose_quotes_is_the_benchmark_s():
    """The README's timing bullet: the samplers' fast path takes the same time whatever noise it returns (the committed
    benchmark's decile medians within 2% of each other, no rank correlation with |noise|), and the exact refinement,
    the one magnitude-dependent branch, is rare near the centre and certain only in the far tail."""
    import json

    bench = json.loads((REPO_ROOT / "benchmarks" / "results" / "lattice_timing.json").read_text())
    for name, t in bench["timing"].items():
        assert abs(t["top_over_bottom_decile_median"] - 1.0) < 0.02, name
        assert abs(t["spearman_time_magnitude_fast"]) < 0.01, name
    laplace = bench["refinement_probability"]["laplace"]
    assert laplace["centre/scale=0"]["expected_over_noise"] < 1e-7
    by_magnitude = {float(k): v for k, v in laplace["centre/scale=0"]["by_magnitude"].items()}
    assert by_magnitude[1.0] < 1e-7 and by_magnitude[max(by_magnitude)] == 1.0
