"""`tipc serve`: a reference server for exported Paddle models, its stdlib client, serving-config planning.

Importing this package is cheap; paddle, numpy and uvicorn load only in `model`, `app` and `server`.
"""
