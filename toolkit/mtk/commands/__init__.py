"""One module per subcommand. Each defines NAME, HELP, add_arguments(parser) and run(args) -> int."""
