"""heraldbench.platform."""
