"""`python -m docqa` runs the CLI."""

from docqa.cli import main

main()
