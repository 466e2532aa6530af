"""The csrc profile (see profile.py)."""
