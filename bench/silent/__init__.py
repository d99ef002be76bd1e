"""The silent-failure benchmark (bench/silent_failures.py): catalogue, injectors, runner, matrix."""
