// Placeholder: the CourierTestServer module's sources arrive with their issue.
