"""BROKEN CONTROLS for the attack tests: pinned copies of release paths that shipped with known leaks.

Nothing here is a mechanism: each module reproduces an old, leaking release path so that an attack test can show
its attack wins there (the test's power) before asserting that it loses on the current estimators.
"""
