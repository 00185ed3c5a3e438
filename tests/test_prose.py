"""ERRATA.md and README.md quote numbers from output files: they must equal the rendering of their templates."""

from __future__ import annotations

import pytest

from dpkernels.report import REPO_ROOT, render_template
from dpkernels.runner import PROSE_TEMPLATES


@pytest.mark.parametrize("template,rendered", sorted(PROSE_TEMPLATES.items()))
def test_prose_is_the_rendering_of_its_template(template, rendered):
    text = render_template((REPO_ROOT / template).read_text())
    assert (REPO_ROOT / rendered).read_text() == text, f"{rendered} is stale or edited by hand: edit {template}, run 'dpkernels report'"
