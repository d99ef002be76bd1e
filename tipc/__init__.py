"""tipc: one trustworthy command to check a PaddlePaddle repo's training and inference pipeline."""

__version__ = "0.2.0"
