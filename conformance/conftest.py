"""The conformance group: the rule table checked against the real libraries.

It needs torch, Lightning and transformers installed (see conformance/requirements.txt and
`python scripts/conformance.py`, which makes that environment); the fast suite in tests/ needs none.
"""
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.conformance)
