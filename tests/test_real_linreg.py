"""Linear regression on diabetes (empirical/papers/real/linreg.py): the one-pass finite-sample stream,
privacy per method, and the quick grid's verdicts as declared (seconds)."""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from empirical.core import experiment as registry  # noqa: E402
from empirical.core.checks import analyse  # noqa: E402
from empirical.papers.real.linreg import (FiniteSample, diffprivlib_linear_regression,  # noqa: E402
                                   run_linreg)
from empirical.run.runner import seed_generators, sweep  # noqa: E402


def test_finite_sample_touches_every_row_at_most_once_per_seed():
    X = np.arange(20.0).reshape(10, 2)
    data = FiniteSample(X, X[:, 0])
    gens = [np.random.default_rng(0), np.random.default_rng(1)]
    parts = [data.sample(gens, 4)[1], data.sample(gens, 6)[1]]
    seen = np.concatenate(parts, axis=1)
    assert all(sorted(row) == sorted(X[:, 0]) for row in seen)
    with pytest.raises(ValueError, match="rows left in this pass"):
        data.sample(gens, 1)
    with pytest.raises(ValueError, match="T must be given"):
        data.condition_number


def test_every_private_method_spends_exactly_its_target():
    pt = {"epsilon": 4.0, "delta": 1e-5, "T": 6, "zeta": 1.0}
    out = run_linreg(pt, seed_generators("test.real.linreg", pt, 4))
    for m in ("adaptive", "adaptive_L6", "fixed"):
        assert np.allclose(out[f"epsilon_spent_{m}"], 4.0, rtol=1e-6)
        assert np.all(out[f"excess_{m}"] > 0)
    assert np.all(out["testmse_ols"] < out["testmse_zero"])
    if "epsilon_pure_diffprivlib" in out:
        assert np.allclose(out["epsilon_pure_diffprivlib"], 4.0)


def test_quick_grid_verdicts_are_as_declared(results_root):
    exp = registry.get("real.linreg.diabetes")
    a = analyse(exp, sweep(exp, results=results_root))
    assert not a.privacy_error and not a.error
    assert [r.verdict for r in a.results] == [c.expected_verdict for c in exp.contrasts]


def test_diffprivlib_peer_runs_when_installed():
    found = diffprivlib_linear_regression()
    if isinstance(found, str):
        pytest.skip(found)
    pt = {"epsilon": 1e6, "delta": 1e-5, "T": 6, "zeta": 1.0}
    out = run_linreg(pt, seed_generators("test.real.linreg.dpl", pt, 2))
    # at a huge ε diffprivlib's functional mechanism is least squares: a check that our call
    # (bounds, no intercept, fresh accountant) is right, not a claim about privacy
    assert np.all(out["excess_diffprivlib"] < 1e-3)


def test_measured_noise_of_every_release_matches_its_claim_and_a_halved_noise_is_caught():
    """Every method's DP-STAT counts and gradient steps carry a measured-noise channel (release −
    noise-free value against the claimed std, α recomputed independently); a run whose noise is
    drawn at half its std fails the check."""
    from empirical.core.rowchecks import check_noise
    from empirical.papers.linreg import audit as al

    exp = registry.get("real.linreg.diabetes")
    pt = {"epsilon": 4.0, "delta": 1e-5, "T": 6, "zeta": 1.0}

    def rows():
        out = run_linreg(pt, seed_generators("test.real.linreg.noise", pt, 4))
        return [{"p_epsilon": 4.0, **{k: float(v[i]) for k, v in out.items()}} for i in range(4)]

    honest = rows()
    chans = {k[len("noise_count_"):] for k in honest[0] if k.startswith("noise_count_")}
    assert chans == {"grad_adaptive", "stat_adaptive", "grad_adaptiveL6", "stat_adaptiveL6",
                     "grad_fixed"}
    assert all(honest[0][f"noise_count_{c}"] > 0 for c in chans)
    summary, error = check_noise(exp, honest)
    assert error == "" and summary
    with al._patched("_streams", al.noise_scaled(0.5)):
        broken = rows()
    assert check_noise(exp, broken)[1] != ""
