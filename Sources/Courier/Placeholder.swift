// Placeholder: the Courier module's sources arrive with their issue.
