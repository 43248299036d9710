"""Private home of the A2A 1.0 models; the public surface is `a2a_layer.types`."""
