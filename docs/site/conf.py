"""Sphinx configuration of the dpkernels site (built by ``dpkernels site`` from a copy of this folder; see
``dpkernels.site``)."""

from __future__ import annotations

import re
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
templates_path = ["_templates"]  # autosummary/: a class page documents its members; a package page, what it defines
html_static_path = ["_static"]
html_css_files = ["dpkernels.css"]
html_js_files = ["dashboard.js"]  # the filter of the dashboard's claims tables

# the notebooks are shown as executed for the reference, never re-executed
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]

autosummary_generate = True
autosummary_imported_members = False
autodoc_member_order = "bysource"  # a paper's statements in the paper's order
# signatures name numpy's ArrayLike and NDArray instead of expanding them (the modules postpone their annotations)
autodoc_type_aliases = {"ArrayLike": "ArrayLike", "NDArray": "NDArray"}
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


def _skip(app, what, name, obj, skip, options):  # noqa: ANN001, ANN201
    """Leave out of a module's page the names the package exports (``dpkernels.ObjectivePerturbation``): each has
    its own page under ``dpkernels``, which references to its defining module's name resolve to.  Leave out of a
    class's page the methods it inherits from scikit-learn or Python (``get_params``, ``score``): documented there."""
    import dpkernels

    if what == "module" and name in dpkernels.__all__ and getattr(dpkernels, name, None) is obj:
        return True
    if what == "class" and (callable(obj) or isinstance(obj, property)):
        module = getattr(getattr(obj, "fget", obj), "__module__", None) or ""
        if module.split(".")[0] != "dpkernels":
            return True
    return None


_ALIAS_REPR = re.compile(r"TypeAliasForwardRef\('([^']*)'\)")


def _signature(app, what, name, obj, options, signature, return_annotation):  # noqa: ANN001, ANN201
    """Runs before numpydoc's handler.  A module constant keeps no signature: numpydoc would give a callable one
    (``Info = dict[str, Any]``) ``dict``'s, which Sphinx 9 cannot place on an object without one ("list assignment
    index out of range"); the pair of ``None`` leaves the signature as it is.  An alias of
    :data:`autodoc_type_aliases` inside a union (``ArrayLike | None``) is written by its name, not by Sphinx's
    ``TypeAliasForwardRef('ArrayLike')``."""
    if what in ("data", "attribute"):
        return None, None
    if "TypeAliasForwardRef" in (signature or "") + (return_annotation or ""):
        return _ALIAS_REPR.sub(r"\1", signature or ""), _ALIAS_REPR.sub(r"\1", return_annotation or "")
    return None


def setup(app):  # noqa: ANN001, ANN201
    app.connect("doctree-read", _cell_ids)
    app.connect("autodoc-skip-member", _skip)
    app.connect("autodoc-process-signature", _signature, priority=400)
