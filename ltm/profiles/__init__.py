"""L1 profiles: the model and its operations."""
