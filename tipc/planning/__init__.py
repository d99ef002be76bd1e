"""Layer 2: every plan is made here (profiles, observed scripts, serving, device flags); pure."""
