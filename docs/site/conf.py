"""Sphinx configuration of the dpkernels site (built by ``dpkernels site`` from a copy of this folder; see
``dpkernels.site``)."""

from __future__ import annotations

from importlib.metadata import version as _version

project = "dpkernels"
author = "dpkernels developers"
release = _version("dpkernels")
version = release

extensions = [
    "myst_nb",
    "numpydoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 shipped with the site: formulas render without a network
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path: list[str] = []
html_static_path = ["_static"]
html_css_files = ["dpkernels.css"]

# the notebooks are shown as executed for the reference, never re-executed
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]

autosummary_generate = True
autosummary_imported_members = False
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_validation_checks: set[str] = set()
# scikit-learn's metadata-routing setters (set_fit_request, ...) are generated on every estimator; their docstrings
# cite scikit-learn's glossary, which this site does not have (84 warnings)
autodoc_default_options = {
    "members": True,
    "exclude-members": "set_fit_request, set_score_request, set_predict_request, set_transform_request, "
                       "set_partial_fit_request, set_decision_function_request, set_predict_proba_request, "
                       "set_inverse_transform_request, set_output",
}

html_theme = "pydata_sphinx_theme"
html_show_sourcelink = False
html_copy_source = False
html_title = f"dpkernels {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}


def _cell_ids(app, doctree) -> None:  # noqa: ANN001
    """Give each notebook cell marked by ``dpkernels.site`` (metadata ``dpkernels_anchors``) those HTML ids, so that
    the dashboard can link to the cell that shows a verdict or a figure."""
    from docutils import nodes

    for node in doctree.findall(nodes.container):
        anchors = (node.get("cell_metadata") or {}).get("dpkernels_anchors", [])
        for anchor in anchors:
            if anchor not in node["ids"]:
                node["ids"].append(anchor)


def setup(app):  # noqa: ANN001, ANN201
    app.connect("doctree-read", _cell_ids)
