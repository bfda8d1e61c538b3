// Placeholder: the HTTPServerCore module's sources arrive with their issue.
