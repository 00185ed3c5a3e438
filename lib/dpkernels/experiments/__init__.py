"""Experiment drivers behind the notebooks: each returns tables (pandas) that a notebook plots and checks.

One module per paper; the notebooks hold the prose and the plots, the logic lives here so that it is
tested and reusable.
"""
