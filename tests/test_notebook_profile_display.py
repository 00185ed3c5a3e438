"""An executed notebook shows the profile it ran (issue 28, item 6): the parameters cell keeps the .py's defaults as
its source, and its output states the parameters papermill injected."""

from __future__ import annotations

import nbformat

from dpkernels.notebooks import clean_notebook


def _executed() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "quick"\nseed = 2011', metadata={"tags": ["parameters"]})
    injected = nbformat.v4.new_code_cell('# Parameters\nprofile = "full"\n', metadata={"tags": ["injected-parameters"]})
    body = nbformat.v4.new_code_cell("print(profile)")
    nb.cells = [params, injected, body]
    return nb


def test_the_parameters_cell_shows_the_profile_the_notebook_ran():
    nb = clean_notebook(_executed())
    assert len(nb.cells) == 2 and nb.cells[0].source.startswith('profile = "quick"')  # the source is the .py's
    assert nb.cells[0].outputs[0].text == "this run: profile = 'full'\n"
    assert nb.metadata["papermill"]["parameters"] == {"profile": "full"}


def test_a_notebook_run_without_parameters_shows_nothing_new():
    nb = _executed()
    nb.cells = [nb.cells[0], nb.cells[2]]
    assert clean_notebook(nb).cells[0].outputs == []
