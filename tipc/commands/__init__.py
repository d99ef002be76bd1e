"""One module per CLI verb; each exposes HELP, add_arguments(parser) and run(args) -> int."""
