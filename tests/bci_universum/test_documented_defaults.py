"""Every documented default (numpydoc ``name : type, default=value``) of the estimators and
the acquisition classes is the one the code uses."""

import ast
import importlib
import inspect
import re

import pytest
from numpydoc.docscrape import ClassDoc

PACKAGES = ("bci_universum.classifiers", "bci_universum.features", "acquisition")
DEFAULT = re.compile(r"default\s*=\s*(.+)$")


def _documented_defaults(cls) -> dict:
    defaults = {}
    for param in ClassDoc(cls)["Parameters"]:
        match = DEFAULT.search(param.type)
        if match:
            try:
                defaults[param.name] = ast.literal_eval(match.group(1).strip())
            except (ValueError, SyntaxError):
                continue  # described in words, not a literal
    return defaults


def _estimators():
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and _documented_defaults(obj):
                yield pytest.param(obj, id=name)


@pytest.mark.parametrize("cls", list(_estimators()))
def test_documented_defaults_are_the_signature_defaults(cls):
    documented = _documented_defaults(cls)
    signature = inspect.signature(cls.__init__).parameters
    for name, value in documented.items():
        assert name in signature, f"{cls.__name__} documents {name!r}, which it does not take"
        actual = signature[name].default
        assert actual == value and type(actual) is type(value), (
            f"{cls.__name__}({name}=...) defaults to {actual!r}; the docstring says {value!r}"
        )
    # the value an instance gets, too (a generated __init__ may advertise another signature)
    if hasattr(cls, "get_params") and all(
        p.default is not p.empty for p in list(signature.values())[1:] if p.kind != p.VAR_KEYWORD
    ):
        params = cls().get_params(deep=False)
        for name, value in documented.items():
            assert params[name] == value, f"{cls.__name__}().{name} is {params[name]!r}"
