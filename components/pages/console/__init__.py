"""Memory Console page (SPEC section 13)."""
