"""The `docqa` command (docqa.cli.main), one module per command group."""
