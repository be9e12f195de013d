"""PostgreSQL: the record of money and of tournament state."""
