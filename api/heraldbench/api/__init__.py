"""heraldbench.api."""
