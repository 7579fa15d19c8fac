"""vdw-gnn: vector diffusion wavelets for geometric GNNs (metadata only)."""

TITLE = "Vector diffusion wavelets for geometric GNNs (VDW-GNN)"
TIER = "B"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 11"

SUMMARY = """\
Diffusion wavelets, built from powers of a graph random-walk operator, are multiscale filters
for scalar signals on graphs and the basis of geometric scattering networks. The paper extends
them to vector-valued signals on point clouds. Following vector diffusion maps, each node gets a
local frame of its tangent plane (local PCA). A neighbour's vector is parallel-transported into
the node's frame before diffusing, so the filters respect the geometry. Vector diffusion wavelets
(VDWs) come from the powers of this vector operator and feed geometric GNNs (VDW-GNNs).
The paper proves frame bounds like those of scalar diffusion wavelets, together with rotation
and translation symmetries. It reports good results on synthetic point clouds, wind fields and
neural-activity data.

Here the construction follows the official code on 64-point ellipsoid clouds: an unweighted
k = 5 kNN graph, full 3x3 local PCA frames whose columns are sign-matched along each edge, the
full-rank transport blocks O_i O_j^T, the row-normalised lazy walk Q = (I + D^-1 S)/2 and the
official scales [0, 1, 2, 4, 6, 9, 16]. A VDW-GNN is one fixed VDW filter bank plus an
invariant-gated readout, so its output is exactly rotation-equivariant. It is compared with the
same network on scalar wavelets (no transport), a non-equivariant GCN on coordinates, EGNN,
and a labelled variant with our earlier reading of the spec (rank-2 tangent transport). There
are two tasks: S1 predicts modulated normals, training on aligned clouds and testing on
aligned and rotated ones; S2 denoises tangent fields. We also check the frame bounds (on the
symmetric operator the claim names) and the exact symmetries.
"""

FIDELITY = """\
Official code read: dj408/vdw-gnn (files named below, read at commits 6048908, b3f6765 and
573006c of the stored snapshot). Facts and numbers were carried over; no code was copied.

- **What follows the official code now (defaults).**
  - Graph: union-symmetrised kNN with k = 5, unweighted
    (`data_processing/ellipsoid_data_classes.py` EllipsoidDataset.get: knn_graph +
    to_undirected; README `--knn_graph_k 5`; `scripts/python/generate_ellipsoid_dataset.py`
    passes `graph_construction=None`, so `get_P` uses unit weights). GCN-xyz and EGNN use the
    same edges, as the official comparison models use `data.edge_index`.
  - Scalar operator P = (I + D^-1 A)/2 (`data_processing/process_pyg_data.py` get_P with
    row_normalize, `column_normalize_P: false` in `config/yaml_files/ellipsoids/*.yaml`).
  - Local PCA (`process_pyg_data.py` get_C_i_dict, get_l_singular_vecs): the graph neighbours,
    columns sqrt(K_ij)(x_j - x_i) with K = exp(-r^2/eps), no mean re-centring, and one eps for
    the whole data set, (mean over clouds of each cloud's mean edge length)^2
    (`generate_ellipsoid_dataset.py`: `gaussian_eps = mean_of_mean_distances ** 2`). Ours
    takes it from the setting's training clouds and uses it for every split, the rotated
    test sets and the probe (officially the mean runs over all 512 clouds).
  - Frames and transport: full 3x3 frames (d = 3 singular vectors); O_j's columns are flipped
    where their dot with O_i's is negative (`match_B_col_directions_to_A`,
    `sing_vect_align_method: column_dot`), and the block is O_i O_j,aligned^T
    (`equivar_or_invar='equivariant'`): orthogonal and full rank, so the normal component is
    kept. Sign matching makes the block independent of the SVD's signs, so it rotates exactly
    with the cloud (tested). The spec's warning that full frames collapse to the identity
    holds for its polar alignment only (tested).
  - Vector operator Q_ij = p_ij O_ij with p_ij from P and diagonal I_3/2, i.e.
    Q = (I + D^-1 S)/2 (`process_pyg_data.py`).
  - Wavelets (`config/yaml_files/ellipsoids/escgnn.yaml`, `geo_scat/layers.py` batch_scatter,
    vector_multiorder_scatter): vector scales [0, 1, 2, 4, 6, 9, 16], scalar scales
    [0, 1, 2, 4, 6, 8, 16], wavelets P^(t_(k-1)) - P^(t_k) plus the low-pass P^16 (7 filters),
    powers by repeated products, and the 0th order (the input itself) kept. Scalar-DW uses the
    vector scales, so it differs from VDW-GNN by the transport only (our choice).
  - Second order (full only, as before): the first-order vectors are gated by v softplus(|v|)
    (`vector_first_order_align_gating_mode: norm_only`, nonlinearity softplus).
  - Scalar inputs: one-hot channels at the points farthest from and closest to the centroid
    (`use_dirac_nodes: true`, `dirac_types: [max, min]`, EllipsoidDataset.get); wind adds the
    observed mask. A constant channel would carry nothing under a row-normalised P (P 1 = 1).
  - S1 target: the Laplacian eigenvector comes from its own unweighted k_laplacian = 10 graph
    (`generate_ellipsoid_dataset.py` compute_graph_laplacian, `--k_laplacian 10`), so the
    task no longer changes with the operator's graph.
  - Training (`config/yaml_files/ellipsoids/experiment.yaml`, `training/train.py`): AdamW
    (icml26.lm.optim, torch.optim.AdamW's update; decay on every parameter as torch does) with
    lr 1e-3, weight decay 1e-6, betas (0.9, 0.999), eps 1e-8; minibatches of 32 clouds
    reshuffled each epoch; at most 500 epochs; validation every 5 epochs. After a burn-in of
    50 epochs, 50 epochs without a validation improvement reload the best weights, halve the
    learning rate (floor 1e-5) and start a fresh optimiser, at most twice; the next such
    plateau stops training. New best weights need a 1e-3 relative improvement
    (`main_metric_rel_improv_thresh` default in `config/train_config.py`). The
    best-validation weights are evaluated. Every method, baselines included, trains this way.
    **Scaled down at default:** the official schedule measured above the 180 CPU-s budget, so
    by a rule fixed before looking at any result (scale epochs, burn-in and patience by 0.6,
    keep everything else) default runs at most 300 epochs with burn-in 30 and patience 30;
    smoke runs 30 epochs (no restart can happen); full keeps 500 / 50 / 50.
- **Deliberately not copied.** ReduceLROnPlateau (patience 50 validations, stepped after
  burn-in) is omitted: the restart rule above fires after 10 validations without
  improvement and resets it, so it can act only after a long run of improvements below
  1e-4 relative. The official first validation sets the best score but keeps the epoch-1
  weights as "best" until the next improvement; ours keeps the weights of that validation.
  The official test split recomputes its operators with distance edge weights
  (`compute_edge_distances: true` applied before RotatedDataset) while training operators
  are unweighted; ours uses the training construction everywhere. A last, smaller minibatch
  is kept (officially `drop_last: true`; irrelevant at 64 training clouds).
- **Still the spec's (not the official code's).** Data: the spec's area-uniform ellipsoid
  sampler with semi-axes clipped at 0.5 (the official generator draws uniform directions on
  the sphere, scales them by |N(mu, sigma)| axes, oversamples 1024 points and keeps 128); the
  squared eigenvector in the S1 target (officially signed, with an arbitrary sign per cloud),
  computed on the cloud itself rather than on the 1024-point oversampled cloud; the centred
  positions and the oriented PCA normal as input channels; the Haar-random test rotations
  (officially one fixed 90-degree rotation about z: reported as `rot90z_ratio`, not claimed).
  Claim 1 is measured on the symmetric lazy operator D^-1/2 S D^-1/2 of the same graph and
  transport, with dyadic J = 4, as the claim says; with the row-normalised network operator
  the same bound holds in the degree-weighted norm.
- **Scale.** Small clouds (64 points at default, 32 at smoke) and one filter-bank layer with an
  invariant-gated readout stand in for the full VDW-GNN. Second-order coefficients are off at
  smoke and default and on at full. The wind-field and macaque neural-activity data sets are
  not available offline. The full profile adds a synthetic wind-like task on the sphere
  (setting `wind`): 256 points, a smooth tangent field (the projected random linear field plus
  n x (K x), normalised), and the network predicts a masked 20% of the vectors. This field is
  INFERRED. Default: 64/16/48 train/val/test clouds (officially 512 clouds of 128 points,
  80/10/10 split; full uses 512 training clouds of 128 points).
- **VDW-GNN readout (INFERRED, as the spec marks it).** alpha(i) = MLP(invariants(i)): 2
  layers, 64 hidden units, SiLU. The invariants are the norms and pairwise inner products of
  the coefficient vectors, plus the scalar-wavelet coefficients of the scalar channels. The
  output is y(i) = sum_c alpha_c(i) U_c(i). Invariants are standardised with training-set
  statistics, and each coefficient channel is divided by its training RMS norm (one number
  per channel, so equivariance is untouched). The official ESCGNNModular (bias-free vector
  mixers [128, 64, 32] with gates, a 128-128 gate MLP over norms, neighbour cosines and the
  scalar track, L1-normalised sigmoid gates) is not reproduced.
- **EGNN (INFERRED details).** There are 3 layers with hidden size 32 on the kNN edges.
  phi_e is a single Linear+SiLU on [h_i, h_j, |x_i - x_j|^2, <v_i^f, v_j^f>], phi_h a residual
  2-layer MLP, mean aggregation, no coordinate update; the output is
  y(i) = mean_j (x_i - x_j) phi(m_ij) + mean_j sum_f v_j^f psi_f(m_ij) from the last layer's
  messages (the official comparison EGNN has 5 layers of 128, sum aggregation and coordinate
  updates; not reproduced). EGNN runs the same seeds and training as the other methods on S1
  (and wind at full); it never runs on S2, as the spec says.
- **GCN-xyz.** This is the standard GCN: D~^-1/2 (A + I) D~^-1/2, 3 layers of 64 units with
  ReLU, and a linear 3-D head. Its input is the vector channels' coordinates as independent
  scalars plus the scalar channels.
- **Labelled variant `vdw-gnn-r2` (our earlier reading).** The same readout and training on
  the spec's filter bank: Gaussian weights exp(-d^2/eps) on a k = 10 graph (eps the per-cloud
  median squared kNN distance, also for local PCA), 3x2 tangent frames with the closest-2x2
  orthogonal alignment and rank-2 blocks T_ij = O_i O_ij O_j^T, symmetric normalisation,
  dyadic J = 4, first order only, a constant scalar channel. It isolates the transport and
  operator change (its inputs and targets are the default's).
- **Data.** Data come from one fixed data seed, shared by all methods and seeds; the full
  profile regenerates data per seed. Rotated sets are recomputed from the rotated clouds
  (graph, frames and operators), not obtained by rotating features. Geometry is float64,
  training float32, predictions and equivariance errors float64.
- **Frame ratio.** It is measured on 100 random vectors per cloud (20 at smoke) for every
  test cloud of a setting, and its exact extremes over all vectors come from the eigenvalues
  of the symmetric operator (every filter is a polynomial in it).
"""

METHODS = ("vdw-gnn", "scalar-dw", "gcn-xyz", "egnn", "vdw-gnn-r2")
SETTINGS = None
PROPOSED = "vdw-gnn"
BACKEND = "torch"
