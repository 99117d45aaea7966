"""Shared parameter descriptions of the dataset readers and loaders."""

import pytest
from numpydoc.docscrape import FunctionDoc

from bci_universum.datasets import epochset_from_raw, load_bci4als, load_eegmmidb, load_recording
from bci_universum.datasets._docs import DOCS, fill_doc


def test_fill_doc_puts_the_entry_at_the_placeholders_indentation():
    @fill_doc
    def f(band=None):
        """Do it.

        Parameters
        ----------
        %(band)s
        """

    (param,) = FunctionDoc(f)["Parameters"]
    assert param.name == "band" and param.type == DOCS["band"].split(" : ", 1)[1].split("\n")[0]
    assert " ".join(param.desc) == " ".join(line.strip() for line in DOCS["band"].splitlines()[1:])
    with pytest.raises(KeyError, match="nothing"):
        fill_doc(type("g", (), {"__doc__": "    %(nothing)s"}))


@pytest.mark.parametrize("func", [load_bci4als, load_eegmmidb, load_recording, epochset_from_raw])
def test_loaders_document_band_and_verbose_once(func):
    assert "%(" not in func.__doc__
    params = {p.name: p for p in FunctionDoc(func)["Parameters"]}
    for name in ("band", "verbose"):
        assert f"{name} : {params[name].type}\n" in DOCS[name] + "\n"
