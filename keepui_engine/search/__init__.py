"""Search: find, its channels and pipeline, why and deep, history, judgments, evaluation."""
