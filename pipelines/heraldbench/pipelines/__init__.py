"""heraldbench.pipelines."""
