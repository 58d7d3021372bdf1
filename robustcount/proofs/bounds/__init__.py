"""Sound bounds of white-box word models over boxes of a space's points, and branch and bound
over Omega_r with the simple prover's answers (docs/proofs/bounds.md): `intervals` (layers and
rounding), `slots` (where a space's changes reach the model), `boxes`, `networks` (cnn-rt,
lstm-rt), `decide` (the goal's rule on bounds) and `branch` (`prove_with_bounds`)."""
