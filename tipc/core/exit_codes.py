"""The exit-code contract of every command: 0 ok, 1 a check failed, 2 usage or config error, 3 internal or
infrastructure error (130 interrupted: tipc.core.interrupts). Its own module so that the CLI's `--help`
imports nothing else (tipc.core.errors re-exports them)."""

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
