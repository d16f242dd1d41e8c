"""Private optimizers of the five papers (numpy), their privacy accounting (through
dp-accounting) and shared primitives.  This layer knows nothing of sympy or of experiments.

Modules: ``base`` (problem interface, result), ``accounting``, ``primitives``, ``validation``,
and one module per paper (``kl_condition``, ...).
"""
from algorithms.base import Problem, Result

__all__ = ["Problem", "Result"]
