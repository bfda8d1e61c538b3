// Placeholder: the CourierHTTP1 module's sources arrive with their issue.
