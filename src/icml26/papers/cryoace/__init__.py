"""cryoace: atom-centric cryo-EM automodelling with recycling and local-resolution guidance
(metadata only)."""

TITLE = ("Atom-centric cryo-EM automodelling with recycling and local-resolution guidance "
         "(CryoACE)")
TIER = "C"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 2"

SUMMARY = """\
Building atomic models from cryo-EM density maps has to respect chemistry and cope with
conformational heterogeneity. Existing tools predict one static model or rely on expensive
heuristic search. CryoACE is an end-to-end model that outputs atomic graphs for both
homogeneous and heterogeneous data. It has two ingredients. First, an atom-centric design:
density features are read directly at the current atom coordinates, and the structure is
refined by recycling, instead of by costly voxel convolutions. Second, a training-free
guidance that uses predicted local-resolution priors to resolve ambiguity caused by motion.
The paper reports that CryoACE beats existing automodellers on static benchmarks and recovers
atomic-level alternative conformations on real heterogeneous data.

Here the two mechanisms are tested in a 2-D toy cryo-EM world: 20-atom Calpha-like chains
rendered into noisy density maps with spatially varying local resolution, and two-state maps
whose flexible tail sits in two blurred half-height lobes. CryoACE-mini reads the map
bilinearly at 17 points around each atom (plus the gradient and its chain neighbours). It
passes messages along the chain, predicts a bounded displacement and a local resolution per
atom, and recycles 4 times. It is compared with a voxel CNN (occupancy heatmap + soft-argmax),
classical real-space refinement, and itself without recycling. Its resolution head drives a
training-free sampler that adds exploration noise only where the map is predicted to be
blurry, compared with the same sampler without guidance and a single deterministic run.
"""

FIDELITY = """\
No official code and no preprint exist for CryoACE; only the abstract. **Everything below the
abstract level is INFERRED** (the spec's 2-D adaptation) and is marked so in the code.

- **World (INFERRED, the spec's generator).** Chains of L = 20 atoms with bonds of exactly
  3.8 A and turning angles U(-100, 100) degrees. A chain is rejected when two atoms with
  |i - j| >= 2 are closer than 4.0 A or an atom leaves the central 40 x 40 A square. Each
  chain gets a random rotation and is centred on the map. The local resolution is
  R_i = 2.5 + 3.5 u_i, with u the min-max scaled sum of 3 sinusoids along the chain.
  Amplitudes U(0.5, 1), frequencies U(0.3, 2) cycles per chain and phases are not given by
  the spec (INFERRED). The density is a sum of Gaussian blobs of s.d. 0.35 R_i
  (`vision.images.gaussian_spots`) on a 48 x 48 grid of 1 A pixels. White noise of s.d.
  0.08 max M is added and each map is standardised. Two-state test maps rotate the last
  8 atoms rigidly about atom 11 by +-theta, theta ~ U(30, 45) degrees; both states must be
  clash-free. The map is (M_A + M_B)/2 with R = 5 A on the flexible atoms. Splits:
  train 1,500, val 200, test 300 static + 100 two-state maps (smoke 200/50/50/20). The maps
  are fixed; the seed sets the network initialisation, the data order, the training noise
  and the sampling noise. Validation maps only give training curves: nothing is selected,
  because every hyperparameter is the spec's.
- **Coarse start.** Every method starts from truth + N(0, 2^2) per coordinate (a stand-in for
  an upstream tracer), identical for all. For two-state maps the start is the noisy parent
  chain (theta = 0), the angular midpoint of the two states. This "consensus start" is
  INFERRED. So this is refinement from a coarse trace, not de-novo building; the paper's
  end-to-end tracing, sequence assignment and side chains are not reproduced.
- **CryoACE-mini (INFERRED architecture from the spec).**
  - Features: `grid_sample` (bilinear, zero outside) at the atom and at two rings of 8
    directions (radii 1.5 and 3.0 A). The central-difference gradient at +-1 px adds 4
    samples (step INFERRED). Neighbour vectors / 3.8 give 23 features.
  - Encoder and messages: an encoder MLP 23-64-64 with SiLU. An index embedding adds
    sin/cos of pi f i/L (f = 1, 2, 4, 8) through a learned 8-to-64 map; the spec's
    "8 dims, added" is read this way (INFERRED). Two residual 1-D convolutions run over the
    chain (kernel 5, SiLU).
  - Heads: the displacement 3 tanh(.) and the resolution softplus(.) + 1.5.
  - Recycling: 3 recycles in training and 4 at test time, with stop-gradient on the
    coordinates between recycles.
  - Loss: the spec's loss. The resolution MSE is averaged over the recycles (INFERRED).
    Training inputs are truth + N(0, s^2) with s ~ U(0.5, 3) per map, redrawn every step.
  - Optimiser: Adam with lr 2e-3 and batch 32 (the written-out `icml26.rl.optim.Adam`). The
    seeds are stacked in one model with a leading seed axis (`icml26.stacked`); each seed
    keeps its own weights, batches and noise.
- **Voxel-CNN.** `vision.nets.conv_stack`: 4 conv layers, 3 x 3, 24 channels, no pooling,
  ReLU (the activation is INFERRED), down to one logit map. It is trained with per-pixel BCE
  against Gaussian bumps (s.d. 1 A) at the true atoms, with the same training maps, epochs,
  batch and optimiser as CryoACE-mini. Read-out: each atom moves to the softmax(logit)-weighted
  mean of the pixels within 4 A of its current position, twice (temperature 1, INFERRED).
- **Real-space refinement.** 60 steps of gradient ascent on the map smoothed with s.d. 1 px,
  with a bond-length restraint of weight 0.5. Each atom moves 0.3 x its gradient, clipped
  at 0.3 A per step. Reading "step 0.3 A" as this clipped step is INFERRED. It stands in for
  Phenix real-space refinement.
- **Guidance (INFERRED: our reading of "training-free guidance with predicted local-resolution
  priors").** The spec's sampler: 8 samples from the consensus start + N(0, 1). Extra noise
  of s.d. g relu(R_hat - 3.5) is added at the start and, annealed by 0.5^k, after each of the
  4 recycles, with g = 1.5. R_hat comes from one pass at the start. Unguided sampling (g = 0)
  uses the same draws; consensus is one deterministic run. The paper's own rule (likely
  inside an iterative or diffusion sampler) is unknown.
- **Compute.** The FLOPs are analytic (multiply and add count one each). The atom-centric
  count is the whole network over 4 recycles; the read-out alone is reported too. The voxel
  count covers the convolutions over all 48^2 pixels. The inference time per map is measured
  CPU time (`time.process_time`, one thread): CryoACE-mini's 4 recycles (all seeds in one
  call, divided by seeds x maps) against the Voxel-CNN forward plus soft-argmax.
- **Scaled down at default (budget cut, fixed before any result was seen).** The spec's
  schedule (1,500 maps x 15 epochs) with the Voxel-CNN on whole maps measured well above the
  180 CPU-s budget. So at default both learned methods train **5 epochs** on the same 1,500
  maps. The Voxel-CNN's per-pixel loss is taken on **one random 24 x 24 window per map and
  step**, a random quarter of each map's pixels; its receptive field is 9 px. The full
  profile keeps the spec's 15 epochs on whole maps. The cut's effect was measured in a side
  experiment outside the pipeline (the default data, seeds 0 and 1, the spec's schedule
  against the cut), reproduced by
  `python -m icml26.papers.cryoace.cut_effect --seeds 0 1 --out /tmp/cryoace-cut`. The
  Voxel-CNN's accuracy did not change with the cut. CryoACE-mini was still improving: under
  the spec's schedule its RMSD and bond validity were better, and its K = 4 / K = 1 ratio
  fell clearly below 0.85. So the recycling claim (C2) fails at default because of this cut
  and is expected to hold at the spec's schedule. The guidance claim (C5) did not change.
  The cut was fixed before any result was seen and was not changed afterwards. The
  pipeline's notes never quote the side experiment. Smoke: 1 seed, 2 epochs.
- **Seeds.** There are 5 seeds at default (the spec names 3) and 10 at full.
- **Full profile.** 20,000 training maps (1,000 val, 1,000 test, 300 two-state: INFERRED
  sizes) on a 64 x 64 grid with a 56 A box (INFERRED box). There are two settings, L = 20 and
  L = 40, and for L = 40 the flexible tail is the last 8 atoms. The optional 3-D variant
  (24^3 grids) is not implemented.
- **Not tested.** Real protein chemistry, 3-D, CTF and real noise models, real heterogeneity,
  the paper's dataset and its numbers.
"""

METHODS = ("cryoace", "cryoace-k1", "cryoace-unguided", "cryoace-consensus", "voxel-cnn", "rsr")
SETTINGS = None
PROPOSED = "cryoace"
BACKEND = "torch"
