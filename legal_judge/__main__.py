"""``python -m legal_judge`` runs the CLI."""

from legal_judge.cli import main

if __name__ == "__main__":
    main()
