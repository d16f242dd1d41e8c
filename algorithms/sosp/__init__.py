"""Algorithms of the second-order stationary point paper (sosp_nonconvex.txt): private SPIDER,
Gaussian PSGD, private model selection and their noise plans."""
