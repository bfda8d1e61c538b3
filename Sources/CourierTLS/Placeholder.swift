// Placeholder: the CourierTLS module's sources arrive with their issue.
