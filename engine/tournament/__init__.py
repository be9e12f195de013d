"""What the tournament director decides, as plain functions over plain data.

The core plans; the server executes the plans (seat moves, money transfers) later.
"""
