"""What connects to feltd from outside: the reference client, bots and the load generator."""
