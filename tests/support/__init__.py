"""Helpers the tests share (model and PDF builders, a live server, stream readers); no tests here."""
