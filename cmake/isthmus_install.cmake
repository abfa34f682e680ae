# Install rules and the exported package (filled in by the foundation work).
