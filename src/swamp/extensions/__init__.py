"""Extensions: model types installed into a repository (the domain package;
its use cases live in the application layer)."""
