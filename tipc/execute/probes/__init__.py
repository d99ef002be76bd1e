"""Standalone scripts tipc runs under the user's interpreter (never imported by tipc itself)."""
