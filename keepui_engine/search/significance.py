"""How sure an evaluation is: bootstrap intervals of a mean and a paired test between two runs.

Both resample queries, the unit BEIR's numbers average over, with a fixed seed so the same
run prints the same interval. The paired test is the randomization (sign-flip) test that
Smucker, Allan and Carterette (CIKM 2007) recommend for IR: under the null hypothesis the
two systems are exchangeable on every query, so each per-query difference is as likely to
have had the other sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
FLIPS = 10000
SEED = 15
CELLS = 1_000_000


def bootstrap_ci(
    values: list[float], level: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-query values.

    Args:
        values: One value per query.
        level: Coverage of the interval.
        resamples: Bootstrap samples (each draws len(values) queries with replacement).
        seed: Random seed.

    Returns:
        (low, high); (mean, mean) for fewer than two values.
    """
    x = np.asarray(values, np.float64)
    if len(x) < 2:
        m = float(x.mean()) if len(x) else 0.0
        return m, m
    rng = np.random.default_rng(seed)
    step = max(1, CELLS // len(x))  # rows per batch, so memory stays small for many queries
    means = np.concatenate(
        [
            x[rng.integers(0, len(x), size=(min(step, resamples - i), len(x)))].mean(axis=1)
            for i in range(0, resamples, step)
        ]
    )
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Paired:
    """A paired comparison of two runs on the same queries.

    Attributes:
        delta: Mean of (this run - the reference) over the queries.
        low: Lower end of the 95% bootstrap interval of delta.
        high: Upper end of that interval.
        p: Two-sided p-value of the randomization test (delta = 0 under the null).
        wins: Queries where this run scored higher.
        losses: Queries where it scored lower.
    """

    delta: float
    low: float
    high: float
    p: float
    wins: int
    losses: int

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready."""
        return {
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "p": self.p,
            "wins": self.wins,
            "losses": self.losses,
        }


def paired_test(
    ours: list[float], reference: list[float], flips: int = FLIPS, seed: int = SEED
) -> Paired:
    """Compare per-query values of two runs, query i against query i.

    Args:
        ours: This run's value per query.
        reference: The reference run's value for the same queries, in the same order.
        flips: Random sign assignments for the randomization test.
        seed: Random seed.

    Returns:
        The mean difference, its bootstrap interval and the test's p-value (1.0 when the
        runs never differ).
    """
    d = np.asarray(ours, np.float64) - np.asarray(reference, np.float64)
    if len(d) == 0:
        return Paired(0.0, 0.0, 0.0, 1.0, 0, 0)
    observed = float(d.mean())
    low, high = bootstrap_ci(d.tolist(), seed=seed)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    if not d.any():
        return Paired(observed, low, high, 1.0, wins, losses)
    rng = np.random.default_rng(seed)
    step = max(1, CELLS // len(d))
    means = np.concatenate(
        [
            ((rng.integers(0, 2, size=(min(step, flips - i), len(d))) * 2 - 1) * d).mean(axis=1)
            for i in range(0, flips, step)
        ]
    )
    extreme = int((np.abs(means) >= abs(observed) - 1e-12).sum())
    return Paired(observed, low, high, (extreme + 1) / (flips + 1), wins, losses)
