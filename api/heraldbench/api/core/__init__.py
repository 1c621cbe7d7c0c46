"""Settings and database set-up of the service."""
