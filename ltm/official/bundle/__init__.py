"""Moving a whole official-plugin installation over: the migration bundle and its import."""
