"""Sphinx configuration of the bci_universum documentation.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` from the root of a checkout
(``pip install ".[docs]"`` first). The gallery examples run during the build.
"""

import os
import sys
from pathlib import Path

import matplotlib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # paradigms.display imports Qt
os.environ.setdefault("MPLBACKEND", "Agg")
matplotlib.use("Agg")

import bci_universum  # noqa: E402

project = "bci_universum"
author = "bci_universum developers"
copyright = "bci_universum developers, BSD-3-Clause"
version = release = bci_universum.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/*.examples", "examples/README.rst"]
root_doc = "index"
default_role = "literal"
# Ambiguous short names in docstrings (``coef_`` exists on several estimators) stay unlinked.
suppress_warnings = ["ref.python"]

# API reference: one page per public module, members documented from their numpydoc docstrings.
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# No network during the build: cross-references to other projects are written as plain text.
intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "abort_on_example_error": True,
    "reference_url": {"bci_universum": None},
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_title = "bci_universum"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
}
html_show_sourcelink = False


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing setters (documented by sklearn)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
