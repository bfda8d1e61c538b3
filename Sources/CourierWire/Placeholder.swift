// Placeholder: the CourierWire module's sources arrive with their issue.
