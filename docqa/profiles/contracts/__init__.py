"""The contracts profile (see profile.py)."""
