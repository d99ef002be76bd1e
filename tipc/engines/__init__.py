"""Model-side workers, each run in a child process through tipc.proc."""
