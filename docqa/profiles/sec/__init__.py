"""The sec profile (see profile.py)."""
