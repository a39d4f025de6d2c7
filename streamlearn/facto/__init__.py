"""streamlearn.facto (see the open issues)."""
