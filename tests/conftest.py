"""Settings for the whole suite.

Hypothesis draws its examples from a fixed seed (``derandomize``) and keeps no example
database, so a run on a clean clone (CI) tries exactly what a run here tried: a property
test fails or passes the same way every time, and a new counterexample is found by
widening a strategy, never by chance.
"""

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")
