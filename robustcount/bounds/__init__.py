"""Sound bounds of white-box word models over boxes of a space's points (docs/proofs/bounds.md),
written against layer types and shared by the prover (`proofs.branch`, `proofs.certificate`),
exact counting (`counting.bound_count`) and certified training (`training.certified`):
`intervals` (interval layers and the model's rounding), `affine` (affine forms for the LSTM's
recurrence), `layers` (an embedding through a linear map over candidates, the output layer's
differences, a box's cap), `convolution` and `lstm` (the layers of the two network kinds),
`networks` (which layers a supported network is), `slots` (where a space's changes reach the
model), `boxes` and `decide` (the goal's rule on bounds)."""
