"""Model CI tools: baseline hooks for run/check, history, the Paddle-version matrix, alerts."""
