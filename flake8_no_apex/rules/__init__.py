"""The rule table: every row of every family, in code order."""
from . import accelerate, apex, deepspeed, lightning, mmcv, torch_amp, transformers

RULES = sorted(
    [*apex.RULES, *lightning.RULES, *torch_amp.RULES, *transformers.RULES, *accelerate.RULES, *mmcv.RULES,
     *deepspeed.RULES],
    key=lambda rule: rule.code,
)
CODES = sorted({rule.code for rule in RULES})
DEFAULT_OFF = sorted({rule.code for rule in RULES if rule.default_off})
PYTHON_RULES = [rule for rule in RULES if rule.language == "python"]  # the others: dependency files
