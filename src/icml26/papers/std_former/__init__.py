"""std-former: image-conditioned texton dictionaries for texture recognition (metadata only)."""

TITLE = "Image-conditioned texton dictionaries for texture recognition (STD-Former)"
TIER = "B"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 8"

SUMMARY = """\
Texture classifiers usually encode an image against a codebook learned once on the training
set. Label-preserving changes such as illumination, scale, blur or compression then move the
test features away from that fixed codebook. STD-Former instead extracts a few "intrinsic
textons" from each input image with a light cross-attention module, the Texture Dictionary
Extractor (TDE), so the dictionary follows the image. Training has two stages. Stage 1
pre-trains the TDE without labels, with a Texton Coverage Loss: the textons should jointly
cover the cloud of patch features. Stage 2 trains a classifier on a residual encoding of the
patch features against the image's own textons. STD-Former+ adds a Sparse Topological Loss
from 0-D persistent homology: a loss on the B - 1 minimum-spanning-tree edges of each batch's
embeddings. The paper reports state-of-the-art accuracy on six texture benchmarks.

Here the six methods run on procedurally generated textures (8 classes of small prototypes
scattered at class-specific densities) seen through a frozen random patch-token extractor.
They are tested on clean images and on four label-preserving shifts of the same images. The
methods are BoVW (a k-means codebook), Deep-TEN (the same encoding against learned global
codewords), GAP-MLP, STD-Former, STD-Former+ and STD-Former without stage 1.
"""

FIDELITY = """\
No official code exists (the spec's search found none); every mechanism follows the spec, and
its inferred parts are marked INFERRED here and in the code.

- **Data (substituted).** The real benchmarks (DTD, FMD, KTH-TIPS2, GTOS, ...) are replaced by
  synthetic textures. Each of C = 8 classes owns two 5x5 prototypes: white noise smoothed by a
  Gaussian of sigma 1 (periodic borders, the shared `vision.images.smooth_field`), rescaled
  to [-0.5, 0.5]. It also owns a density n_c in {10, 20} and a mixing ratio rho_c in
  {0.3, 0.7}, cycled over the classes so each of the four combinations is used equally often
  (INFERRED assignment). An image is a 0.5 background plus n_c copies pasted at uniform
  positions (corners from -4 to 31, cropped at the border: INFERRED). Each copy has amplitude
  U[0.8, 1.2] and a random 90-degree rotation; N(0, 0.05^2) noise is added and the result is
  clipped to [0, 1]; 32x32 pixels. Class definitions come from one global stream; every seed
  draws its own images: train 64, val 16 and test 32 per class.
- **Shifts (test only, applied to the same clean test images).** Illumination: gain
  U[0.6, 0.8] or U[1.25, 1.5] (each with probability 1/2), offset U[-0.15, 0.15], clipped
  (INFERRED clip). Blur: Gaussian, sigma 0.8 px. Scale: zoom x1.3 with a centre crop (the
  shared `zoom_centre_crop`, exact affine resampling, in place of `scipy.ndimage.zoom` +
  crop). Compression: quantised to 8 grey levels, N(0, 0.08^2) noise added, clipped
  (INFERRED clip).
- **Backbone (substituted).** A frozen random 2-layer MLP (16 -> 64 GELU -> 32, weights
  N(0, 1/fan_in) from one global seed, zero biases: INFERRED) on the 64 non-overlapping 4x4
  patches stands in for a pretrained CNN/ViT. Tokens are computed once per image.
- **TDE (INFERRED).** One cross-attention layer: K = 8 learnable queries (N(0, 1) init),
  W_k and W_v (N(0, 1/32) init), A_kn = softmax_n(q_k . W_k v_n / sqrt(32)),
  t_k = sum_n A_kn W_v v_n.
- **Stage 1: Texton Coverage Loss (INFERRED form).**
  mean_n[-tau log sum_k exp(-||u_n - t_k||^2 / tau)] + 0.1 mean_{k != l} exp(-||t_k - t_l||^2 /
  tau), where tau = 0.1 x the batch's mean squared token-texton distance (detached). It is
  trained with Adam at lr 1e-3 for 150 steps of 64 unlabelled training images. STD-Former and
  STD-Former+ of a seed share one stage 1. The loss is proportional to the scale of the
  projected tokens, so shrinking W_v alone lowers it. Claim 5's note therefore also reports
  the scale-free loss (loss / mean squared distance) and the final ||W_v|| ratio, computed
  from the run.
- **Stage 2 encoding (INFERRED, Deep-TEN-style).** It uses soft assignments against the
  image's own textons with s = the image's mean squared distance, the masses pi_k, and the
  normalised mean residuals r_k / (||r_k|| + 1e-6). x = L2-normalised [pi, r_1..r_K], fed to
  an MLP (K x 33) -> 64 (ReLU, dropout 0.1) -> C. Cross-entropy, Adam at lr 2e-3 for 250
  steps of 64 images; the TDE is fine-tuned at lr 2e-4.
- **STD-Former+.** The Sparse Topological Loss runs on the batch's 64-D penultimate
  embeddings (after ReLU, before dropout: INFERRED). The MST of the detached distances comes
  from `scipy.sparse.csgraph.minimum_spanning_tree`; its edge lengths are the 0-D persistence
  deaths, which the tests check against single linkage. Same-class edges cost d^2,
  different-class edges max(0, 1 - d)^2; the mean over the 63 edges is added to the
  cross-entropy with weight 0.1.
- **Baselines.** BoVW: k-means (K = 32, one k-means++ start) on the training tokens, a
  soft-assignment histogram with the same s rule, standardised, then scikit-learn's logistic
  regression with C = 1 (standardisation and C: INFERRED, fixed, not tuned). Deep-TEN: the
  same encoding and head, but against K = 8 global learnable codewords. Its smoothing factors
  are learnable (a_nk = softmax_k(-s_k ||u_n - c_k||^2), as in Deep-TEN), and a learnable
  projection W_v (the TDE's W_v initialisation) plays the role of the TDE's value projection.
  It is trained end to end at lr 2e-3. The codewords are initialised as K random projected
  training tokens, with s_k = 1 / the mean squared distance (INFERRED). GAP-MLP: the mean of
  the tokens through the same head. STD-noStage1: STD-Former's stage 2 from the TDE's random
  initialisation (the same one stage 1 starts from).
- **Pairing.** Every method of a seed reads the same images. The TDE initialisation, the
  head initialisation, the batch order and the dropout masks come from (seed, stream) streams
  shared by the methods, so STD-Former, STD-Former+ and STD-noStage1 differ only in the
  stage they are defined by.
- **Scale.** Default: the spec's sizes, 6 methods x 5 seeds, with all neural runs of a
  family stacked in one process. Smoke: Deep-TEN and STD-Former, 1 seed, 16 training images
  per class, the illumination and compression shifts, 30 steps per stage. Full: 10 seeds,
  16 classes, 64x64 images (densities scaled with the area), 200 training images per class,
  K in {4, 8, 16}; BoVW runs once (its codebook does not depend on K). The claims read K = 8.
- **What this cannot show.** It cannot confirm state-of-the-art numbers on real textures. It
  tests whether an image-conditioned dictionary is more robust to label-preserving shifts
  than a static one, and whether an MST-edge loss separates classes better.
"""

METHODS = ("bovw", "deep-ten", "gap-mlp", "std-former", "std-former-plus", "std-nostage1")
SETTINGS = None
PROPOSED = ("std-former", "std-former-plus")
BACKEND = "torch"
