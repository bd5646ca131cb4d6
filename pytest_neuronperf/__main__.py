"""``python -m pytest_neuronperf``: the command-line tools (cli/main.py)."""

from .cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
