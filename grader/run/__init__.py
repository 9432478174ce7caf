"""Everything that runs the student's code or manages its process: the child, its sandbox, the warm
workers and the wire format between them."""
