"""`feltd bench live`: connected players over real WebSockets against a running feltd server, and
the same load against a bare relay, from load-generator processes apart from the server's."""
