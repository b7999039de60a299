"""The endpoints of the JSON API, by concern."""
