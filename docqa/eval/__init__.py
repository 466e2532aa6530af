"""Measuring docqa on QA sets: retrieval recall and answer scores (`docqa eval`)."""
