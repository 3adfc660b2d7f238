"""What a run leaves behind: results.json and its reading, the per-example records, the output folder, its
mark and log, and the provenance of the run. The floor below the engine: it imports nothing above the base."""
