"""LeNet-style CNN on the UCI 8x8 handwritten digits: model, data and the shared pre/post-processing."""
