"""The codes of the rule table, and its opt-in ones, as constants: settings, the cache and a
warm `check` read them without building the table (tests/test_rules.py keeps them equal to it)."""

CODES = (
    "APX001", "APX002", "APX003", "APX004", "APX005", "APX006", "APX007", "APX008", "APX009",
    "APX010", "APX101", "APX102", "APX103", "APX104", "APX105", "APX106", "APX107", "APX108", "APX109",
    "APX110", "APX111", "APX201", "APX202", "APX203", "APX204", "APX205", "APX206", "APX207", "APX301",
    "APX302", "APX303", "APX304", "APX305", "APX306", "APX401", "APX402", "APX403", "APX404", "APX405", "APX501",
    "APX601",
)
DEFAULT_OFF = ("APX010", "APX107", "APX108", "APX110",)  # in flake8's extended default ignore
