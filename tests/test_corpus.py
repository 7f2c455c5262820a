"""Regression corpus: pytorch-lightning 1.8.6, whose source uses most of the deprecated APIs.

The labelled findings below were read off the source by hand (file, line, code); the per-code
totals guard against silent drift and were reviewed against a grep of the corpus, whose
remaining hits are docstrings, strings and the library's own definitions.
"""
from __future__ import annotations

import ast
from collections import Counter

import pytest

import corpus
from flake8_no_apex.checker import check_tree
from flake8_no_apex.prefilter import default as default_prefilter

pytestmark = [pytest.mark.corpus, pytest.mark.slow]  # a whole release

LABELLED = {
    # the apex plugin: apex import under a guard, every apex.amp call, Lightning's apex helpers
    ("pytorch_lightning/plugins/precision/apex_amp.py", 22, "APX006"),  # _APEX_AVAILABLE import
    ("pytorch_lightning/plugins/precision/apex_amp.py", 26, "APX001"),  # from apex import amp
    ("pytorch_lightning/plugins/precision/apex_amp.py", 32, "APX006"),  # AMPType.APEX
    ("pytorch_lightning/plugins/precision/apex_amp.py", 46, "APX103"),  # amp.master_params
    ("pytorch_lightning/plugins/precision/apex_amp.py", 51, "APX101"),  # amp.initialize
    ("pytorch_lightning/plugins/precision/apex_amp.py", 76, "APX102"),  # amp.scale_loss
    ("pytorch_lightning/plugins/precision/apex_amp.py", 105, "APX103"),  # amp.state_dict
    # availability checks that the unrelated PyPI package `apex` also passes
    ("lightning_lite/plugins/precision/deepspeed.py", 27, "APX001"),  # RequirementCache("apex")
    ("pytorch_lightning/utilities/imports.py", 32, "APX001"),  # module_available("apex.amp")
    # native AMP built on the torch.cuda.amp namespace
    ("pytorch_lightning/plugins/precision/native_amp.py", 56, "APX203"),
    ("pytorch_lightning/plugins/precision/native_amp.py", 121, "APX201"),
    ("lightning_lite/plugins/precision/native_amp.py", 104, "APX201"),
    # the optimizer_step hook and trainer.amp_backend reads
    ("pytorch_lightning/core/module.py", 1587, "APX009"),
    ("pytorch_lightning/loops/optimization/optimizer_loop.py", 344, "APX006"),
    ("pytorch_lightning/loops/optimization/optimizer_loop.py", 365, "APX009"),
    # plugin construction inside the accelerator connector
    ("pytorch_lightning/trainer/connectors/accelerator_connector.py", 694, "APX005"),
    ("pytorch_lightning/trainer/connectors/accelerator_connector.py", 724, "APX007"),
    ("pytorch_lightning/trainer/connectors/accelerator_connector.py", 728, "APX004"),
    ("lightning_lite/connector.py", 462, "APX007"),  # lightning_lite NativeMixedPrecision
}

# `if _TORCH_GREATER_EQUAL_1_10: from torch import autocast else: from torch.cuda.amp import
# autocast` is a version-guarded compatibility shim: its fallback branch is not a finding.
NOT_REPORTED = {
    ("pytorch_lightning/plugins/precision/native_amp.py", 31, "APX201"),
    ("lightning_lite/plugins/precision/native_amp.py", 32, "APX201"),
}

TOTALS = {
    "APX001": 3, "APX003": 5, "APX004": 8, "APX005": 3, "APX006": 40, "APX007": 118,
    "APX009": 2, "APX101": 1, "APX102": 1, "APX103": 2, "APX201": 2, "APX203": 4, "APX207": 2,
    "APX601": 2,
}


@pytest.fixture(scope="module")
def findings():
    root = corpus.ensure()
    if root is None:
        pytest.skip("the regression corpus could not be downloaded from PyPI")
    found = {}
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        found[path.relative_to(root).as_posix()] = (source, check_tree(ast.parse(source)))
    return found


def test_labelled_usages_are_found(findings):
    reported = {(name, f.line, f.code) for name, (_, fs) in findings.items() for f in fs}
    assert LABELLED - reported == set()


def test_version_guarded_shims_are_not_reported(findings):
    reported = {(name, f.line, f.code) for name, (_, fs) in findings.items() for f in fs}
    assert NOT_REPORTED & reported == set()


def test_totals_per_code(findings):
    assert Counter(f.code for _, fs in findings.values() for f in fs) == Counter(TOTALS)


def test_prefilter_keeps_every_file_with_findings_and_drops_most_others(findings):
    prefilter = default_prefilter()
    kept = {name for name, (source, _) in findings.items() if prefilter.may_match(source)}
    assert {name for name, (_, fs) in findings.items() if fs} <= kept
    assert len(kept) < len(findings) / 5  # 54 of 293: 45 with findings
