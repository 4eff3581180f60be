"""Mock PBS client commands; each module has ``main(argv) -> exit code``."""
