"""Talking to a server a chain started: readiness, the client, the launcher, load."""
