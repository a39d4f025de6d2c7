"""streamlearn.sketch (see the open issues)."""
