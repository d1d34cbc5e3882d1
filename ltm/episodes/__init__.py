"""L2 episodes: model, scoped store, recall and ranking, lifecycle writes, import/export."""
