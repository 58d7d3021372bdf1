"""The dataset commands, one module each (see `robustcount.runs.command`): each module declares
one `Command` and registers it; the runner, the report and the CLI find every module here."""
