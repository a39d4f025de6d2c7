"""streamlearn.second_order (see the open issues)."""
