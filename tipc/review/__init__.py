"""Reviewer mode: many submissions, each checked in its own work area and sandbox, in parallel, into one
summary (`tipc review`). sources: submissions and their work areas; executor: the local pool (and ray_exec:
Ray) behind one interface; store: the resumable state; summary: the model and its renderers; engine: the
review itself. Ray is imported only by ray_exec, only for `--executor ray`."""
