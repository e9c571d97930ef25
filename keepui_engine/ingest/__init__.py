"""What enters the store: put (writing), files and URLs (ingesting), extraction, splitting."""
