"""flake8-no-apex: find NVIDIA apex and deprecated mixed-precision (AMP) APIs."""
__version__ = "0.1.0"
