"""Jinja templates for the built-in content handlers (installed as package data)."""
