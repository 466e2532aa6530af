"""`python -m docqa` runs the CLI."""

from docqa.cli.main import main

main()
